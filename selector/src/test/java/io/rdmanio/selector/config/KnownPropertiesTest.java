package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** A misspelled {@code rdmanio.*} property is named with the closest known one; the known ones are those the
 * tables of docs/ describe. */
class KnownPropertiesTest {

    @Test
    void aMisspelledPropertyIsNamedWithTheClosestKnownOne() {
        assertEquals(List.of("unknown property -Drdmanio.fabirc is ignored (did you mean rdmanio.fabric?)"),
                KnownProperties.warnings(Set.of("rdmanio.fabirc", "rdmanio.fabric", "java.home")));
        assertEquals(List.of("unknown property -Drdmanio.shm.directory is ignored (did you mean rdmanio.shm.dir?)"),
                KnownProperties.warnings(Set.of("rdmanio.shm.directory")));
        assertEquals(List.of("unknown property -Drdmanio.colour is ignored (see docs/configuration.md)"),
                KnownProperties.warnings(Set.of("rdmanio.colour")));
        assertNull(KnownProperties.closest("rdmanio.somethingElseEntirely"));
    }

    @Test
    void documentedAndKnownPropertiesAreTheSame() throws Exception {
        String root = System.getProperty("rdmanio.root", "..");
        Set<String> documented = new TreeSet<>();
        try (Stream<Path> docs = Files.list(Path.of(root, "docs"))) {
            for (Path doc : (Iterable<Path>) docs.filter(p -> p.toString().endsWith(".md"))::iterator) {
                // The first cell of every table row that names a property.
                Matcher m = Pattern.compile("(?m)^\\| `(rdmanio\\.[A-Za-z0-9.]+)`").matcher(Files.readString(doc));
                while (m.find()) {
                    documented.add(m.group(1));
                }
            }
        }
        assertEquals(documented, new TreeSet<>(KnownProperties.NAMES));
    }
}
