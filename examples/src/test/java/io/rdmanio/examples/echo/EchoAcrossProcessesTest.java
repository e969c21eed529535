package io.rdmanio.examples.echo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmanio.core.fabric.Fabrics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The unmodified echo server and client in two fresh JVMs with the default {@code rdmanio.fabric=auto}: a peer on
 * this host is carried by shm (or by disni where this machine has an RDMA device), never by TCP.
 */
class EchoAcrossProcessesTest {

    @TempDir
    Path dir;

    @Test
    void autoCarriesAPeerOnThisHostOverAFabric() throws Exception {
        String shm = Fabrics.names().contains("shm") ? Fabrics.provider("shm").unavailableReason(Map.of()) : "not built";
        assumeTrue(shm == null, () -> "needs the shm fabric: " + shm);
        Path rules = dir.resolve("host.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        Path serverStats = dir.resolve("server.json");
        Path clientStats = dir.resolve("client.json");
        FreshJvm.Started server = FreshJvm.start(dir, "server-",
                Map.of("rdmanio.rules", rules.toString(), "rdmanio.stats", serverStats.toString()),
                EchoServer.class, "127.0.0.1", "0");
        FreshJvm.Outcome client;
        try {
            String listening = server.awaitOutput("echo server listening on ");
            String port = listening.substring(listening.lastIndexOf(':') + 1).trim();
            client = FreshJvm.run(dir, Map.of("rdmanio.rules", rules.toString(), "rdmanio.stats", clientStats.toString()),
                    EchoClient.class, "127.0.0.1", port, "200");
        } finally {
            server.stop();
        }
        assertEquals(0, client.exitCode(), client::describe);
        assertTrue(client.stdout().contains(" ok"), client::describe);
        for (Path stats : new Path[] {serverStats, clientStats}) {
            assertEquals(1L, FreshJvm.stat(stats, "connections", "rdma"), () -> read(stats));
            assertEquals(0L, FreshJvm.stat(stats, "connections", "tcp"), () -> read(stats));
            assertEquals(0L, FreshJvm.stat(stats, "bytes", "tcp"), () -> read(stats));
            assertTrue(read(stats).contains("\"fabric\": \"auto\""), () -> read(stats));
            assertTrue(read(stats).contains("\"shm\": {") || read(stats).contains("\"disni\": {"), () -> read(stats));
        }
        // The server echoes what it reads: it read and wrote every byte the client wrote and read.
        assertEquals(FreshJvm.stat(clientStats, "bytes", "rdma"), FreshJvm.stat(serverStats, "bytes", "rdma"));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }
}
