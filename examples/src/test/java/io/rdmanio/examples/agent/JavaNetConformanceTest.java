package io.rdmanio.examples.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.examples.echo.EchoClient;
import io.rdmanio.examples.echo.EchoServer;
import java.nio.file.Path;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * java.net's {@code Socket}, {@code ServerSocket} and {@code HttpURLConnection} under the agent: the scenarios of
 * {@link JavaNetScenarios} on the JDK, routed and unrouted ({@link AbstractScenarioConformanceTest}); then java.net
 * and NIO ends reach each other across two processes over shm. JDK 25 closes a socket whose connect failed, 17
 * does not, and rdmanio follows each.
 */
class JavaNetConformanceTest extends AbstractScenarioConformanceTest {

    JavaNetConformanceTest() {
        super(JavaNetScenarios.class, 30,
            "echo: 1048576 bytes, same: true",
            "readTimeoutThenData: java.net.SocketTimeoutException: Read timed out; then 42, closed false",
            "closeWhileReading: java.net.SocketException: Socket closed, interrupted false; peer reads -1",
            "interruptWhileReading: read 7, interrupted true; closed false",
            "interruptWhileAccepting: accepted, interrupted true; server closed false",
            "lingerZeroResets: java.net.SocketException: Connection reset",
            "backlog: connected; connected; java.net.SocketTimeoutException: Connect timed out; after an accept: "
                + "connected",
            "readAfterClose: plain: read java.net.SocketException: Socket closed, read of nothing 0, available "
                + "java.net.SocketException: Socket closed; after EOF (read -1 first): read -1, read of nothing 0, "
                + "available java.net.SocketException: Socket closed; after shutdownInput: read "
                + "java.net.SocketException: Socket closed, read of nothing 0, available java.net.SocketException: "
                + "Socket closed; ",
            "optionValues: traffic class 999: java.lang.IllegalArgumentException: tc is not in range 0 -- 255; 255 "
                + "reads 252; keep-alive idle -1: java.net.SocketException: Invalid argument; receive buffer 1 reads "
                + "1152; accepted reuses addresses true",
            "boundBeforeConnect: bind: read 7, peer sees the port true, local /127.0.0.1, another bind "
                + "java.net.BindException; constructor: read 7, peer sees the port true, local /127.0.0.1, another "
                + "bind java.net.BindException; chosen port: read 7, peer sees the port true, local /127.0.0.1, "
                + "another bind java.net.BindException; ",
            "urgentData: inline false: read abcd, after shutdownOutput java.io.IOException: Broken pipe, after close "
                + "java.net.SocketException: Socket closed; inline true: read abXcd, after shutdownOutput "
                + "java.io.IOException: Broken pipe, after close java.net.SocketException: Socket closed; ",
            "acceptedInheritsListenerOptions: accepted IP_TOS 32, TCP_KEEPIDLE 31; closed getTrafficClass "
                + "java.net.SocketException: Socket closed",
            "nioClientToServerSocket: from nio / from net",
            "socketToNioServer: from net / from nio",
            "httpUrlConnection: 200 hello /a; 200 hello /b;",
            "httpUrlConnectionToJetty: blob.bin same true, 0 same true, 100 same true, 3145745 same true",
            "tls: TLSv1.3, 262144 bytes, same: true");
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
        Path boundStats = dir.resolve("net-bound-client.json");
        AgentJvm.Outcome bound;
        server = AgentJvm.start(dir, "nio-server", agent + serverStats, EchoServer.class, "127.0.0.1", "0");
        try {
            String port = server.awaitLine("echo server listening on .*:(\\d+)$");
            client = AgentJvm.run(dir, agent + clientStats, JavaNetEcho.class, "client", "127.0.0.1", port, "200");
            // A client bound before it connects is routed too (its kernel socket keeps the port).
            bound = AgentJvm.run(dir, agent + boundStats, JavaNetEcho.class, "client", "127.0.0.1", port, "200",
                "bound");
        } finally {
            server.stop();
        }
        assertEquals(0, client.exitCode(), client::describe);
        assertEquals(1, ok.matcher(client.stdout()).results().count(), client::describe);
        assertEquals(0, bound.exitCode(), bound::describe);
        assertEquals(1, ok.matcher(bound.stdout()).results().count(), bound::describe);
        assertOnlyFabric(2, serverStats);
        assertOnlyFabric(1, clientStats, boundStats);
    }

    static void assertOnlyFabric(int connections, Path... statsFiles) throws Exception {
        for (Path stats : statsFiles) {
            assertEquals(connections, AgentJvm.stat(stats, "connections", "rdma"), () -> read(stats));
            assertEquals(0, AgentJvm.stat(stats, "connections", "tcp"), () -> read(stats));
            assertTrue(read(stats).contains("\"shm\": {"), () -> read(stats));
        }
    }
}
