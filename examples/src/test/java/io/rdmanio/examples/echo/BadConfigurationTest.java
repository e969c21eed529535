package io.rdmanio.examples.echo;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A program started with a broken rdmanio configuration stops, and stderr says which file, line and why. */
class BadConfigurationTest {

    @TempDir
    Path dir;

    private FreshJvm.Outcome runWith(Map<String, String> properties) throws Exception {
        return FreshJvm.run(dir, properties, EchoDemo.class, "--messages", "1", "127.0.0.1");
    }

    private static void assertFailsSaying(FreshJvm.Outcome outcome, String expected) {
        assertNotEquals(0, outcome.exitCode(), outcome::describe);
        // The provider's own line, before the JDK's ServiceConfigurationError and its stack trace.
        assertTrue(outcome.stderr().startsWith("rdmanio: " + expected + "\n")
                || outcome.stderr().contains("\nrdmanio: " + expected + "\n"),
                () -> "stderr should have the line: rdmanio: " + expected + "\n" + outcome.describe());
        assertTrue(!outcome.stdout().contains("all echoes intact"), outcome::describe);
    }

    @Test
    void syntaxErrorNamesFileLineAndReason() throws Exception {
        Path rules = dir.resolve("broken.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 90-80\n");
        assertFailsSaying(runWith(Map.of("rdmanio.rules", rules.toString(), "rdmanio.fabric", "loopback")),
                rules + ":2: port range '90-80' runs backwards: 90 > 80 (connect 127.0.0.1 90-80)");
    }

    @Test
    void unknownActionNamesFileLineAndReason() throws Exception {
        Path rules = dir.resolve("action.rules");
        Files.writeString(rules, "# fast path\n\nconnect 127.0.0.1 * fast\n");
        assertFailsSaying(runWith(Map.of("rdmanio.rules", rules.toString(), "rdmanio.fabric", "loopback")),
                rules + ":3: unknown action 'fast': expected rdma, tcp, both or auto (connect 127.0.0.1 * fast)");
    }

    @Test
    void missingRulesFileNamesThePath() throws Exception {
        Path missing = dir.resolve("absent.rules");
        assertFailsSaying(runWith(Map.of("rdmanio.rules", missing.toString(), "rdmanio.fabric", "loopback")),
                "rules file " + missing + " does not exist");
    }

    @Test
    void unknownFabricListsTheValidNames() throws Exception {
        assertFailsSaying(runWith(Map.of("rdmanio.fabric", "infiniband")),
                "-Drdmanio.fabric=infiniband is not a fabric: expected one of auto, disni, shm, loopback");
    }
}
