package io.rdmanio.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rdmanio.selector.RdmaSelectorProvider;
import io.rdmanio.selector.config.TransportStatsMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The binder against a live rdmanio in this JVM (this module's test JVM runs nothing else): meters at 0 before
 * rdmanio routed anything, then the connections and bytes of a routed loopback connection, and the open gauge back
 * at 0 once it is closed and torn down.
 */
class RdmanioMetricsTest {

    @Test
    void theAttributesReadAreTheBeansOwn() throws Exception {
        for (String attribute : List.of("OpenConnectionsByFabric", "FabricConnections", "TcpConnections",
            "FabricBytes", "TcpBytes", "Fallbacks", "CreditStalls", "ReceiverNotReady")) {
            TransportStatsMXBean.class.getMethod("get" + attribute);
        }
    }

    @Test
    void metersFollowARoutedConnection(@TempDir Path dir) throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        new RdmanioMetrics().bindTo(registry);
        assertEquals(0, open(registry, "loopback"));
        assertEquals(0, registry.get("rdmanio.connections").tag("transport", "fabric").functionCounter().count());

        Path rules = dir.resolve("metrics.rules");
        Files.writeString(rules, "bind 127.0.0.1 * rdma\nconnect 127.0.0.1 * rdma\n");
        System.setProperty("rdmanio.rules", rules.toString());
        System.setProperty("rdmanio.fabric", "loopback");
        RdmaSelectorProvider provider = new RdmaSelectorProvider();
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            SocketChannel client = provider.openSocketChannel();
            assertTrue(client.connect(server.getLocalAddress()));
            SocketChannel accepted = server.accept();
            ByteBuffer out = ByteBuffer.allocate(5000);
            while (out.hasRemaining()) {
                client.write(out);
            }
            ByteBuffer in = ByteBuffer.allocate(5000);
            while (in.hasRemaining()) {
                assertTrue(accepted.read(in) >= 0);
            }
            // rdmanio registers its bean on a thread of its own after the first routed connection.
            javax.management.ObjectName name = new javax.management.ObjectName(RdmanioMetrics.OBJECT_NAME);
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
            while (!java.lang.management.ManagementFactory.getPlatformMBeanServer().isRegistered(name)) {
                assertTrue(System.nanoTime() - deadline < 0, "the bean registered in time");
                Thread.sleep(5);
            }
            assertEquals(2, open(registry, "loopback"));
            assertEquals(0, open(registry, "shm"));
            assertEquals(2, registry.get("rdmanio.connections").tag("transport", "fabric").functionCounter().count());
            assertEquals(0, registry.get("rdmanio.connections").tag("transport", "tcp").functionCounter().count());
            assertTrue(registry.get("rdmanio.bytes").tag("transport", "fabric").functionCounter().count() >= 10_000,
                "5,000 bytes written and read");
            assertEquals(0, registry.get("rdmanio.receiver.not.ready").functionCounter().count());
            client.close();
            accepted.close();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (open(registry, "loopback") != 0) {
            assertTrue(System.nanoTime() - deadline < 0, "closed connections leave the open gauge");
            Thread.sleep(10);
        }
    }

    private static double open(MeterRegistry registry, String fabric) {
        return registry.get("rdmanio.connections.open").tag("fabric", fabric).gauge().value();
    }
}
