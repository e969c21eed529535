package io.rdmanio.examples.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmanio.examples.echo.EchoClient;
import io.rdmanio.examples.echo.EchoServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plain NIO echo server and a client of many concurrent connections, in two JVMs started with only
 * {@code -javaagent:rdmanio-agent.jar=rules=...,fabric=shm}: every message of every connection comes back byte for
 * byte, and both stats files show every connection on the fabric.
 */
class ShmAcrossProcessesThroughAgentTest {

    private static final int CONNECTIONS = 40;
    private static final int MESSAGES = 150;

    @TempDir
    Path dir;

    @Test
    void manyConnectionsEchoByteExactOverShm() throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/dev/shm")) && Files.isWritable(Path.of("/dev/shm")),
                "needs a writable /dev/shm");
        Path rules = dir.resolve("echo.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        Path serverStats = dir.resolve("server.json");
        Path clientStats = dir.resolve("client.json");
        AgentJvm.Child server = AgentJvm.start(dir, "server", "rules=" + rules + ",fabric=shm,stats=" + serverStats,
                EchoServer.class, "127.0.0.1", "0");
        AgentJvm.Outcome client;
        try {
            String port = server.awaitLine("echo server listening on .*:(\\d+)$");
            client = AgentJvm.run(dir, "rules=" + rules + ",fabric=shm,stats=" + clientStats, EchoClient.class,
                    "127.0.0.1", port, Integer.toString(MESSAGES), Integer.toString(CONNECTIONS));
        } finally {
            server.stop();
        }
        assertEquals(0, client.exitCode(), client::describe);
        Matcher ok = Pattern.compile(": " + MESSAGES + " messages, \\d+ bytes, crc sent (\\w+) received \\1 ok$",
                Pattern.MULTILINE).matcher(client.stdout());
        int intact = 0;
        while (ok.find()) {
            intact++;
        }
        assertEquals(CONNECTIONS, intact, client::describe);
        for (Path stats : new Path[] {serverStats, clientStats}) {
            assertEquals(CONNECTIONS, AgentJvm.stat(stats, "connections", "rdma"), () -> read(stats));
            assertEquals(0, AgentJvm.stat(stats, "connections", "tcp"), () -> read(stats));
            assertTrue(read(stats).contains("\"shm\": {"), () -> read(stats));
            assertTrue(read(stats).contains("\"receiverNotReady\": 0\n}"), () -> read(stats));
        }
        assertEquals(AgentJvm.stat(clientStats, "bytes", "rdma"), AgentJvm.stat(serverStats, "bytes", "rdma"));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }
}
