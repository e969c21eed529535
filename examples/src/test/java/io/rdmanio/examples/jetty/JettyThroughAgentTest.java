package io.rdmanio.examples.jetty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.examples.agent.AgentJvm;
import io.rdmanio.examples.httpclient.Fetch;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Unmodified Jetty 12 (a standard ServerConnector, static files and a dynamic handler) fetched by the JDK's
 * HttpClient and by Jetty's, byte-exact, with only the rdmanio agent flag added.
 */
class JettyThroughAgentTest {

    @TempDir
    Path dir;

    private Path rules(String text) throws Exception {
        Path rules = dir.resolve("jetty.rules");
        Files.writeString(rules, text);
        return rules;
    }

    @Test
    void jettyAndBothClientsInOneJvmOnTheLoopbackFabric() throws Exception {
        Path rules = rules("bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        Path stats = dir.resolve("stats.json");
        Path content = dir.resolve("www");
        AgentJvm.Outcome o = AgentJvm.run(dir, "rules=" + rules + ",fabric=loopback,stats=" + stats,
                JettyDemo.class, "127.0.0.1", content.toString());
        assertEquals(0, o.exitCode(), o::describe);
        assertTrue(o.stdout().contains("all fetches exact"), o::describe);
        long fabric = AgentJvm.stat(stats, "connections", "rdma");
        // At least one connection per client, counted at both ends.
        assertTrue(fabric >= 4 && fabric % 2 == 0, () -> o.describe() + "fabric connections: " + fabric);
        assertEquals(0, AgentJvm.stat(stats, "connections", "tcp"), o::describe);
        assertTrue(AgentJvm.stat(stats, "bytes", "rdma") > 2L * 2 * (6 << 20), o::describe);
    }

    @Test
    void jettyAndClientsInTwoJvmsOverSharedMemory() throws Exception {
        Path rules = rules("bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        Path serverStats = dir.resolve("server.json");
        Path clientStats = dir.resolve("client.json");
        Path content = dir.resolve("www");
        AgentJvm.Child server = AgentJvm.start(dir, "server", "rules=" + rules + ",fabric=shm,stats=" + serverStats,
                JettyServer.class, "127.0.0.1", "0", content.toString());
        long clientConnections;
        try {
            String port = server.awaitLine("jetty on 127\\.0\\.0\\.1:(\\d+)");
            AgentJvm.Outcome client = AgentJvm.start(dir, "client", "rules=" + rules + ",fabric=shm,stats=" + clientStats,
                    Fetch.class, "http://127.0.0.1:" + port, content.toString(), "all").await();
            assertEquals(0, client.exitCode(), client::describe);
            assertTrue(client.stdout().contains("all fetches exact"), client::describe);
            clientConnections = AgentJvm.stat(clientStats, "connections", "rdma");
            // At least one connection for each of the three clients (HttpURLConnection through java.net).
            assertTrue(clientConnections >= 3, client::describe);
            assertTrue(client.stdout().contains("urlconnection GET /blob.bin: 200"), client::describe);
            assertEquals(0, AgentJvm.stat(clientStats, "connections", "tcp"), client::describe);
        } finally {
            server.stop();
        }
        assertEquals(clientConnections, AgentJvm.stat(serverStats, "connections", "rdma"));
        assertEquals(0, AgentJvm.stat(serverStats, "connections", "tcp"));
    }
}
