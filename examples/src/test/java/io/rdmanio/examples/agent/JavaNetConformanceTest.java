package io.rdmanio.examples.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmanio.examples.echo.EchoClient;
import io.rdmanio.examples.echo.EchoServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * java.net's {@code Socket}, {@code ServerSocket} and {@code HttpURLConnection} under the agent: the scenarios of
 * {@link JavaNetScenarios}, written once, print the same lines on the JDK alone, through the agent with rules that
 * route 127.0.0.1 (shm and loopback: every connection on the fabric), and through the agent with rules that route
 * nothing these scenarios use (every socket handed to the JDK's own implementation). Then java.net and NIO ends
 * reach each other across two processes over shm. Runs on the JDK the build runs on (17, and 25 in
 * {@code ./rdmanio test}), whose own behaviour is the reference: JDK 25 closes a socket whose connect failed,
 * 17 does not, and rdmanio follows each.
 */
class JavaNetConformanceTest {

    @TempDir
    static Path dir;

    private static Path rules;
    private static String jdk;

    @BeforeAll
    static void runOnTheJdk() throws Exception {
        rules = dir.resolve("loopback-address.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        AgentJvm.Outcome plain = AgentJvm.run(dir, "-", JavaNetScenarios.class);
        assertEquals(0, plain.exitCode(), plain::describe);
        jdk = plain.stdout();
        // The reference itself says what the scenarios are for: checked, so that equal output cannot mean
        // equally broken.
        assertFalse(jdk.contains("FAILED"), jdk);
        for (String line : new String[] {
            "echo: 1048576 bytes, same: true",
            "readTimeoutThenData: java.net.SocketTimeoutException: Read timed out; then 42, closed false",
            "closeWhileReading: java.net.SocketException: Socket closed; peer reads -1",
            "interruptWhileReading: read 7, interrupted true; closed false",
            "interruptWhileAccepting: accepted, interrupted true; server closed false",
            "lingerZeroResets: java.net.SocketException: Connection reset",
            "nioClientToServerSocket: from nio / from net",
            "socketToNioServer: from net / from nio",
            "httpUrlConnection: 200 hello /a; 200 hello /b;",
            "httpUrlConnectionToJetty: blob.bin same true, 0 same true, 100 same true, 3145745 same true"}) {
            assertTrue(jdk.contains(line + "\n"), () -> "the JDK's own run lacks '" + line + "':\n" + jdk);
        }
    }

    @Test
    void routedOverShmAsTheJdk() throws Exception {
        assumeShm();
        routedAsTheJdk("shm");
    }

    @Test
    void routedOverLoopbackAsTheJdk() throws Exception {
        routedAsTheJdk("loopback");
    }

    private void routedAsTheJdk(String fabric) throws Exception {
        Path stats = dir.resolve(fabric + ".json");
        AgentJvm.Outcome routed = AgentJvm.run(dir, "rules=" + rules + ",fabric=" + fabric + ",stats=" + stats,
            JavaNetScenarios.class);
        assertEquals(0, routed.exitCode(), routed::describe);
        assertEquals(jdk, routed.stdout(), routed::describe);
        assertEquals(0, AgentJvm.stat(stats, "connections", "tcp"), () -> read(stats));
        assertTrue(AgentJvm.stat(stats, "connections", "rdma") >= 30, () -> read(stats));
    }

    @Test
    void unroutedSocketsAreTheJdksOwn() throws Exception {
        Path elsewhere = dir.resolve("elsewhere.rules");
        Files.writeString(elsewhere, "connect 127.0.0.2 *\nbind 127.0.0.2 *\n");
        Path stats = dir.resolve("tcp.json");
        AgentJvm.Outcome run = AgentJvm.run(dir, "rules=" + elsewhere + ",stats=" + stats, JavaNetScenarios.class);
        assertEquals(0, run.exitCode(), run::describe);
        assertEquals(jdk, run.stdout(), run::describe);
        assertEquals(0, AgentJvm.stat(stats, "connections", "rdma"), () -> read(stats));
        assertTrue(AgentJvm.stat(stats, "connections", "tcp") >= 30, () -> read(stats));
    }

    /** A java.net server and an NIO client in two processes, then an NIO server and a java.net client. */
    @Test
    void javaNetAndNioEndsReachEachOtherAcrossProcesses() throws Exception {
        assumeShm();
        String agent = "rules=" + rules + ",fabric=shm,stats=";
        Pattern ok = Pattern.compile(": 200 messages, \\d+ bytes, crc sent (\\w+) received \\1 ok$", Pattern.MULTILINE);

        Path serverStats = dir.resolve("net-server.json");
        Path clientStats = dir.resolve("nio-client.json");
        AgentJvm.Child server = AgentJvm.start(dir, "net-server", agent + serverStats, JavaNetEcho.class,
            "server", "127.0.0.1", "0");
        AgentJvm.Outcome client;
        try {
            String port = server.awaitLine("echo server listening on .*:(\\d+)$");
            client = AgentJvm.run(dir, agent + clientStats, EchoClient.class, "127.0.0.1", port, "200", "3");
        } finally {
            server.stop();
        }
        assertEquals(0, client.exitCode(), client::describe);
        assertEquals(3, ok.matcher(client.stdout()).results().count(), client::describe);
        assertOnlyFabric(3, serverStats, clientStats);

        serverStats = dir.resolve("nio-server.json");
        clientStats = dir.resolve("net-client.json");
        server = AgentJvm.start(dir, "nio-server", agent + serverStats, EchoServer.class, "127.0.0.1", "0");
        try {
            String port = server.awaitLine("echo server listening on .*:(\\d+)$");
            client = AgentJvm.run(dir, agent + clientStats, JavaNetEcho.class, "client", "127.0.0.1", port, "200");
        } finally {
            server.stop();
        }
        assertEquals(0, client.exitCode(), client::describe);
        assertEquals(1, ok.matcher(client.stdout()).results().count(), client::describe);
        assertOnlyFabric(1, serverStats, clientStats);
    }

    private static void assertOnlyFabric(int connections, Path... statsFiles) throws Exception {
        for (Path stats : statsFiles) {
            assertEquals(connections, AgentJvm.stat(stats, "connections", "rdma"), () -> read(stats));
            assertEquals(0, AgentJvm.stat(stats, "connections", "tcp"), () -> read(stats));
            assertTrue(read(stats).contains("\"shm\": {"), () -> read(stats));
        }
    }

    private static void assumeShm() {
        assumeTrue(Files.isDirectory(Path.of("/dev/shm")) && Files.isWritable(Path.of("/dev/shm")),
            "needs a writable /dev/shm");
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }
}
