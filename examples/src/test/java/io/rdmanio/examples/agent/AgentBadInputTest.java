package io.rdmanio.examples.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A program started with the agent and bad input stops before its {@code main} runs, with status 1 and one line
 * on stderr that names the option, the file and line, or the fabric at fault.
 */
class AgentBadInputTest {

    @TempDir
    Path dir;

    private AgentJvm.Outcome runWith(String options) throws Exception {
        return AgentJvm.run(dir, options, ProviderName.class);
    }

    private static void assertStopsSaying(AgentJvm.Outcome o, String expected) {
        assertEquals(1, o.exitCode(), o::describe);
        assertTrue(o.stderr().startsWith("rdmanio: " + expected + "\n")
                || o.stderr().contains("\nrdmanio: " + expected + "\n"),
                () -> "stderr should have the line: rdmanio: " + expected + "\n" + o.describe());
        // The application never ran.
        assertFalse(o.stdout().contains("Selector"), o::describe);
        // A refusal, not a crash of the JVM.
        assertFalse(o.stderr().contains("FATAL ERROR"), o::describe);
    }

    @Test
    void unknownOptionIsNamed() throws Exception {
        assertStopsSaying(runWith("fabric=loopback,rulez=/tmp/x"),
                "unknown agent option 'rulez' in 'fabric=loopback,rulez=/tmp/x': expected rules, fabric, stats, fallbackMillis, debug");
    }

    @Test
    void optionWithoutValueIsNamed() throws Exception {
        assertStopsSaying(runWith("rules"), "agent option 'rules' has no value: expected rules=VALUE");
    }

    @Test
    void repeatedOptionIsNamed() throws Exception {
        assertStopsSaying(runWith("fabric=shm,fabric=loopback"),
                "agent option 'fabric' is given twice in 'fabric=shm,fabric=loopback'");
    }

    @Test
    void missingRulesFileIsNamed() throws Exception {
        Path missing = dir.resolve("absent.rules");
        assertStopsSaying(runWith("rules=" + missing), "rules file " + missing + " does not exist");
    }

    @Test
    void unreadableRulesFileIsNamed() throws Exception {
        Path rules = dir.resolve("secret.rules");
        Files.writeString(rules, "connect 127.0.0.1 *\n");
        Files.setPosixFilePermissions(rules, PosixFilePermissions.fromString("---------"));
        Assumptions.assumeFalse(Files.isReadable(rules), "the file stays readable for this user (root)");
        AgentJvm.Outcome o = runWith("rules=" + rules);
        assertEquals(1, o.exitCode(), o::describe);
        assertTrue(o.stderr().contains("rdmanio: rules file " + rules), o::describe);
    }

    @Test
    void unknownActionNamesFileAndLine() throws Exception {
        Path rules = dir.resolve("action.rules");
        Files.writeString(rules, "# fast path\n\nconnect 127.0.0.1 * fast\n");
        assertStopsSaying(runWith("rules=" + rules + ",fabric=loopback"),
                rules + ":3: unknown action 'fast': expected rdma, tcp, both or auto (connect 127.0.0.1 * fast)");
    }

    @Test
    void syntaxErrorNamesFileAndLine() throws Exception {
        Path rules = dir.resolve("broken.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 90-80\n");
        assertStopsSaying(runWith("rules=" + rules),
                rules + ":2: port range '90-80' runs backwards: 90 > 80 (connect 127.0.0.1 90-80)");
    }

    @Test
    void unknownFabricListsTheValidNames() throws Exception {
        assertStopsSaying(runWith("fabric=infiniband"),
                "-Drdmanio.fabric=infiniband is not a fabric: expected one of auto, disni, shm, loopback");
    }

    @Test
    void badFallbackTimeIsNamed() throws Exception {
        assertStopsSaying(runWith("fallbackMillis=soon"),
                "-Drdmanio.fallbackMillis=soon is not a whole number of milliseconds");
    }
}
