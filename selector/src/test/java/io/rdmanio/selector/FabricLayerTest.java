package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The layer rule of docs/architecture.md, checked on the class files: nothing in the channel layer names a class
 * of a particular fabric (shm, disni, loopback). It reaches fabrics through the fabric SPI
 * ({@code FabricProvider}: availability, the address a listener is reached at, doctor's report), so a new fabric
 * needs no change here. A reference to a fabric class, however it is written, is a class name in the class
 * file's constant pool, which is what this test reads.
 */
class FabricLayerTest {

    private static final List<String> FABRIC_PACKAGES = List.of("io/rdmanio/core/fabric/shm/",
        "io/rdmanio/core/fabric/disni/", "io/rdmanio/core/fabric/loopback/");

    @Test
    void theChannelLayerNamesNoFabricClass() throws Exception {
        Path classes = Path.of(RdmaSelectorProvider.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertTrue(Files.isDirectory(classes), "needs the compiled classes of the selector module: " + classes);
        List<String> offenders = new ArrayList<>();
        int read = 0;
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".class"))::iterator) {
                read++;
                String text = new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1);
                for (String pkg : FABRIC_PACKAGES) {
                    if (text.contains(pkg)) {
                        offenders.add(classes.relativize(f) + " names " + pkg);
                    }
                }
            }
        }
        assertTrue(read > 50, "read only " + read + " class files under " + classes);
        assertEquals(List.of(), offenders);
    }

    /** The check itself finds such a name: a class file of a fabric, read the same way, names its own package. */
    @Test
    void theCheckSeesAFabricClassName() throws IOException, java.net.URISyntaxException {
        Class<?> shm = io.rdmanio.core.fabric.Fabrics.provider("shm").getClass();
        try (var in = shm.getResourceAsStream(shm.getSimpleName() + ".class")) {
            String text = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
            assertTrue(text.contains("io/rdmanio/core/fabric/shm/"));
        }
    }
}
