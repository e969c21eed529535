package io.rdmanio.examples.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.examples.echo.EchoDemo;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one-flag activation: an unmodified NIO program started with only {@code -javaagent:rdmanio-agent.jar=...}
 * (no provider property, no {@code --add-exports}) runs on the fabric where the rules say so.
 */
class AgentActivationTest {

    @TempDir
    Path dir;

    @Test
    void echoRunsOnTheFabricWithOnlyTheAgentFlag() throws Exception {
        Path rules = dir.resolve("echo.rules");
        Files.writeString(rules, "# the echo server and its clients on 127.0.0.1\nbind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        Path stats = dir.resolve("stats.json");
        AgentJvm.Outcome o = AgentJvm.run(dir, "rules=" + rules + ",fabric=loopback,stats=" + stats,
                EchoDemo.class, "--clients", "2", "--messages", "20", "127.0.0.1");
        assertEquals(0, o.exitCode(), o::describe);
        assertTrue(o.stdout().contains("all echoes intact"), o::describe);
        // Two clients and the two connections the server accepted, all carried by the fabric.
        assertEquals(4, AgentJvm.stat(stats, "connections", "rdma"), () -> o.describe() + read(stats));
        assertEquals(0, AgentJvm.stat(stats, "connections", "tcp"), () -> read(stats));
        assertTrue(AgentJvm.stat(stats, "bytes", "rdma") > 0, () -> read(stats));
        assertFalse(o.stderr().contains("add-exports"), o::describe);
        String json = Files.readString(stats);
        // Sockets per rule: the server's bind by line 2, the two clients' connects by line 3.
        assertTrue(json.contains("\"" + rules + ":2: bind 127.0.0.1 *\": 1"), json);
        assertTrue(json.contains("\"" + rules + ":3: connect 127.0.0.1 *\": 2"), json);
        assertTrue(json.contains("\"fallbacks\": {\n    \"count\": 0"), json);
        assertTrue(json.contains("\"receiverNotReady\": 0\n}"), json);
    }

    @Test
    void withoutRulesEverythingStaysOnTcp() throws Exception {
        Path stats = dir.resolve("stats.json");
        AgentJvm.Outcome o = AgentJvm.run(dir, "stats=" + stats, EchoDemo.class, "--messages", "5", "127.0.0.1");
        assertEquals(0, o.exitCode(), o::describe);
        assertEquals(0, AgentJvm.stat(stats, "connections", "rdma"), () -> read(stats));
        assertEquals(2, AgentJvm.stat(stats, "connections", "tcp"), () -> read(stats));
    }

    @Test
    void agentWithoutOptionsInstallsTheProvider() throws Exception {
        AgentJvm.Outcome o = AgentJvm.run(dir, null, ProviderName.class);
        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("io.rdmanio.selector.RdmaSelectorProvider io.rdmanio.selector.RdmaSelector\n", o.stdout(),
                o::describe);
    }

    static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (Exception e) {
            return "(no " + p + ": " + e + ")";
        }
    }
}
