package io.rdmanio.examples.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.examples.agent.AgentJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Unmodified Netty 4.1 NIO echo server and clients, started with only the rdmanio agent flag. */
class NettyThroughAgentTest {

    @TempDir
    Path dir;

    private Path rules(String text) throws Exception {
        Path rules = dir.resolve("netty.rules");
        Files.writeString(rules, text);
        return rules;
    }

    @Test
    void serverAndClientsInOneJvmOnTheLoopbackFabric() throws Exception {
        Path rules = rules("bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        Path stats = dir.resolve("stats.json");
        AgentJvm.Outcome o = AgentJvm.run(dir, "rules=" + rules + ",fabric=loopback,stats=" + stats,
                NettyEchoDemo.class, "127.0.0.1", "--clients", "4", "--bytes", "2000000");
        assertEquals(0, o.exitCode(), o::describe);
        assertTrue(o.stdout().contains("all netty echoes intact"), o::describe);
        assertEquals(8, AgentJvm.stat(stats, "connections", "rdma"), o::describe);
        assertEquals(0, AgentJvm.stat(stats, "connections", "tcp"), o::describe);
        // Each of 4 clients sent 2 MB and read it back; the server read and wrote the same.
        assertEquals(4L * 2_000_000 * 4, AgentJvm.stat(stats, "bytes", "rdma"), o::describe);
    }

    @Test
    void unroutedAddressStaysOnTcp() throws Exception {
        Path rules = rules("bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        Path stats = dir.resolve("stats.json");
        AgentJvm.Outcome o = AgentJvm.run(dir, "rules=" + rules + ",fabric=loopback,stats=" + stats,
                NettyEchoDemo.class, "127.0.0.2", "--clients", "2", "--bytes", "300000");
        assertEquals(0, o.exitCode(), o::describe);
        assertTrue(o.stdout().contains("all netty echoes intact"), o::describe);
        assertEquals(0, AgentJvm.stat(stats, "connections", "rdma"), o::describe);
        assertEquals(4, AgentJvm.stat(stats, "connections", "tcp"), o::describe);
    }

    @Test
    void serverAndClientInTwoJvmsOverSharedMemory() throws Exception {
        Path rules = rules("bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        Path serverStats = dir.resolve("server.json");
        Path clientStats = dir.resolve("client.json");
        AgentJvm.Child server = AgentJvm.start(dir, "server", "rules=" + rules + ",fabric=shm,stats=" + serverStats,
                NettyEchoServer.class, "127.0.0.1", "0");
        try {
            String port = server.awaitLine("netty echo server on 127\\.0\\.0\\.1:(\\d+)");
            AgentJvm.Outcome client = AgentJvm.start(dir, "client", "rules=" + rules + ",fabric=shm,stats=" + clientStats,
                    NettyEchoClient.class, "127.0.0.1", port, "--clients", "3", "--bytes", "1000000").await();
            assertEquals(0, client.exitCode(), client::describe);
            assertTrue(client.stdout().contains("all netty echoes intact"), client::describe);
            assertEquals(3, AgentJvm.stat(clientStats, "connections", "rdma"), client::describe);
            assertEquals(0, AgentJvm.stat(clientStats, "connections", "tcp"), client::describe);
            // Bootstrap.connect(remote, local): each channel binds before it connects, and is routed all the same.
            Path boundStats = dir.resolve("bound-client.json");
            AgentJvm.Outcome bound = AgentJvm.start(dir, "bound-client", "rules=" + rules + ",fabric=shm,stats="
                    + boundStats, NettyEchoClient.class, "127.0.0.1", port, "--clients", "2", "--bytes", "1000000",
                    "--bind", "127.0.0.1").await();
            assertEquals(0, bound.exitCode(), bound::describe);
            assertTrue(bound.stdout().contains("all netty echoes intact"), bound::describe);
            assertEquals(2, AgentJvm.stat(boundStats, "connections", "rdma"), bound::describe);
            assertEquals(0, AgentJvm.stat(boundStats, "connections", "tcp"), bound::describe);
        } finally {
            AgentJvm.Outcome s = server.stop();
            assertEquals(5, AgentJvm.stat(serverStats, "connections", "rdma"), s::describe);
            assertEquals(0, AgentJvm.stat(serverStats, "connections", "tcp"), s::describe);
        }
    }
}
