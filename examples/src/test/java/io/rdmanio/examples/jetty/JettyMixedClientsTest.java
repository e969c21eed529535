package io.rdmanio.examples.jetty;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.examples.agent.AgentJvm;
import io.rdmanio.examples.httpclient.Fetch;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One Jetty server bound under a {@code both} rule serves, at the same time, a client JVM started with the agent
 * (carried by the shm fabric) and a plain TCP client (curl where installed, else a JVM without the agent) on the
 * same address and port.
 */
class JettyMixedClientsTest {

    @TempDir
    Path dir;

    @Test
    void fabricClientAndTcpClientAtOnce() throws Exception {
        Path rules = dir.resolve("mixed.rules");
        Files.writeString(rules, "bind 127.0.0.1 * both\nconnect 127.0.0.1 *\n");
        Path serverStats = dir.resolve("server.json");
        Path clientStats = dir.resolve("client.json");
        Path content = dir.resolve("www");
        AgentJvm.Child server = AgentJvm.start(dir, "server", "rules=" + rules + ",fabric=shm,stats=" + serverStats,
                JettyServer.class, "127.0.0.1", "0", content.toString());
        long fabricClientConnections;
        try {
            String port = server.awaitLine("jetty on 127\\.0\\.0\\.1:(\\d+)");
            String base = "http://127.0.0.1:" + port;
            AgentJvm.Child fabricClient = AgentJvm.start(dir, "fabric-client",
                    "rules=" + rules + ",fabric=shm,stats=" + clientStats, Fetch.class, base, content.toString(), "both");
            if (curl() != null) {
                fetchWithCurl(base, content);
            } else {
                AgentJvm.Outcome plain = AgentJvm.start(dir, "tcp-client", "-", Fetch.class, base, content.toString(),
                        "jdk").await();
                assertEquals(0, plain.exitCode(), plain::describe);
                assertTrue(plain.stdout().contains("all fetches exact"), plain::describe);
            }
            AgentJvm.Outcome f = fabricClient.await();
            assertEquals(0, f.exitCode(), f::describe);
            assertTrue(f.stdout().contains("all fetches exact"), f::describe);
            fabricClientConnections = AgentJvm.stat(clientStats, "connections", "rdma");
            assertTrue(fabricClientConnections >= 2, f::describe);
            assertEquals(0, AgentJvm.stat(clientStats, "connections", "tcp"), f::describe);
        } finally {
            server.stop();
        }
        // The server accepted the agent's connections on the fabric and the plain client's on TCP.
        assertEquals(fabricClientConnections, AgentJvm.stat(serverStats, "connections", "rdma"));
        assertTrue(AgentJvm.stat(serverStats, "connections", "tcp") >= 1, () -> AgentJvmFiles.read(serverStats));
    }

    private static String curl() {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path c = Path.of(d, "curl");
            if (Files.isExecutable(c)) {
                return c.toString();
            }
        }
        return null;
    }

    /** curl fetches every static file and dynamic body into files, which are then compared byte for byte. */
    private void fetchWithCurl(String base, Path content) throws Exception {
        List<String> command = new ArrayList<>(List.of(curl(), "-sS", "--fail", "--max-time", "120"));
        List<Path> outputs = new ArrayList<>();
        List<byte[]> expected = new ArrayList<>();
        for (String f : Content.FILES) {
            Path out = dir.resolve("curl-" + f);
            command.addAll(List.of("-o", out.toString(), base + "/" + f));
            outputs.add(out);
            expected.add(null);
        }
        for (int n : Content.DYNAMIC_SIZES) {
            Path out = dir.resolve("curl-dynamic-" + n);
            command.addAll(List.of("-o", out.toString(), base + Content.DYNAMIC_PREFIX + n));
            outputs.add(out);
            expected.add(Content.dynamic(n));
        }
        Path err = dir.resolve("curl.err");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(err.toFile()).start();
        assertTrue(p.waitFor(180, TimeUnit.SECONDS), "curl did not finish");
        assertEquals(0, p.exitValue(), () -> "curl failed: " + AgentJvmFiles.read(err));
        for (int i = 0; i < outputs.size(); i++) {
            byte[] want = expected.get(i) != null ? expected.get(i)
                    : Files.readAllBytes(content.resolve(Content.FILES.get(i)));
            byte[] got = Files.exists(outputs.get(i)) ? Files.readAllBytes(outputs.get(i)) : new byte[0];
            assertArrayEquals(want, got, "curl " + outputs.get(i));
        }
    }

    /** Reads a file for a failure message. */
    static final class AgentJvmFiles {
        static String read(Path p) {
            try {
                return Files.readString(p);
            } catch (Exception e) {
                return "(cannot read " + p + ": " + e + ")";
            }
        }
    }
}
