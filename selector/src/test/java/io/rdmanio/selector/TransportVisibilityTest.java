package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.selector.config.ConfigLoader;
import io.rdmanio.selector.config.RdmanioConfig;
import io.rdmanio.selector.config.TransportStats;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JMX bean {@code io.rdmanio:type=Transport}, read through the platform MBean server as a monitoring tool
 * would: connections and bytes per transport and fabric, sockets per routing rule, fallbacks with their reason,
 * and no receiver-not-ready event. The counters and the engines used are process-wide, so the scenario runs in a
 * fresh JVM (it would otherwise decide which engine other tests of this JVM see first).
 */
class TransportVisibilityTest {

    @TempDir
    Path dir;

    @Test
    void beanReportsTransportsRulesAndFallbacks() throws Exception {
        Path out = dir.resolve("child.txt");
        Process child = new ProcessBuilder(java.util.List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), Child.class.getName(), dir.toString()))
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        assertTrue(child.waitFor(120, java.util.concurrent.TimeUnit.SECONDS), "the child JVM did not exit");
        String output = Files.readString(out);
        assertEquals(0, child.exitValue(), output);
        assertTrue(output.contains("transport bean OK"), output);
    }

    /** The scenario, in its own JVM; throws (and so exits non-zero) on the first failed check. */
    public static final class Child extends NioTestSupport {

        private RdmaSelectorProvider provider;

        @Override
        protected SelectorProvider provider() {
            return provider;
        }

        public static void main(String[] args) throws Exception {
            Child c = new Child();
            try {
                c.run(Path.of(args[0]));
            } finally {
                c.closeResources();
            }
            System.out.println("transport bean OK");
        }

        /** Loads the configuration the way the provider does at start, from system properties, then restores them. */
        private RdmanioConfig load(Path rules) {
            Map<String, String> set = Map.of(ConfigLoader.RULES, rules.toString(), ConfigLoader.FABRIC, "loopback");
            Map<String, String> old = new HashMap<>();
            set.forEach((k, v) -> old.put(k, System.setProperty(k, v)));
            try {
                return ConfigLoader.load();
            } finally {
                old.forEach((k, v) -> {
                    if (v == null) {
                        System.clearProperty(k);
                    } else {
                        System.setProperty(k, v);
                    }
                });
            }
        }

        private static long count(Object tabular, String key) {
            CompositeData row = ((TabularData) tabular).get(new Object[] {key});
            return row == null ? 0 : (Long) row.get("value");
        }

        private static Object read(String attribute) throws Exception {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName(TransportStats.OBJECT_NAME);
            // Registered by a thread of its own after the first routed connection: given a bounded wait.
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
            while (!server.isRegistered(name)) {
                assertTrue(System.nanoTime() - deadline < 0, TransportStats.OBJECT_NAME + " registered in time");
                Thread.sleep(5);
            }
            return server.getAttribute(name, attribute);
        }

        private void exchange(SocketChannel c, SocketChannel a, int n) throws Exception {
            byte[] data = pattern(n, n);
            ByteBuffer out = ByteBuffer.wrap(data);
            while (out.hasRemaining()) {
                c.write(out);
            }
            ByteBuffer in = ByteBuffer.allocate(n);
            while (in.hasRemaining()) {
                assertTrue(a.read(in) >= 0, "early end of stream");
            }
            assertArrayEquals(data, in.array());
        }

        void run(Path dir) throws Exception {
            Path rules = dir.resolve("visible.rules");
            Files.writeString(rules, "bind 127.0.0.1 * rdma\nconnect 127.0.0.1 * rdma\nconnect 127.0.0.2 * both\n");
            provider = new RdmaSelectorProvider(load(rules));
            String bindRule = rules + ":1: bind 127.0.0.1 * rdma";
            String connectRule = rules + ":2: connect 127.0.0.1 * rdma";
            String bothRule = rules + ":3: connect 127.0.0.2 * both";

            // The fallback is also a JDK Flight Recorder event, as an operator recording this JVM would see it.
            jdk.jfr.Recording recording = new jdk.jfr.Recording();
            recording.enable("io.rdmanio.Fallback").withThreshold(java.time.Duration.ZERO);
            recording.start();

            // The bean appears with the first connection rdmanio routes: a JVM pays for the MBean server only then.
            assertFalse(ManagementFactory.getPlatformMBeanServer()
                    .isRegistered(new ObjectName(TransportStats.OBJECT_NAME)), "registered before any connection");
            // A fresh JVM: every counter starts at zero.
            long fabricConnections = 0;
            long tcpConnections = 0;
            long fabricBytes = 0;
            long fallbacks = 0;
            Object byRule;
            long bindBefore = 0;
            long connectBefore = 0;
            long bothBefore = 0;
            long noRuleBefore = 0;

            // On the fabric: a server bound and a client connected by rules 1 and 2.
            ServerSocketChannel fabricServer = track(provider.openServerSocketChannel());
            fabricServer.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            SocketChannel c = client();
            assertTrue(c.connect(fabricServer.getLocalAddress()));
            SocketChannel a = track(fabricServer.accept());
            exchange(c, a, 10_000);

            // Under both, to a server that listens on TCP only (no rule for its bind): the client falls back.
            ServerSocketChannel tcpServer = track(provider.openServerSocketChannel());
            tcpServer.bind(new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 2}), 0));
            SocketChannel c2 = client();
            assertTrue(c2.connect(tcpServer.getLocalAddress()));
            SocketChannel a2 = track(tcpServer.accept());
            exchange(c2, a2, 1000);

            assertEquals("loopback", read("Fabric"));
            assertEquals(rules.toString(), read("Rules"));
            assertEquals(fabricConnections + 2, (Long) read("FabricConnections"));
            assertEquals(tcpConnections + 2, (Long) read("TcpConnections"));
            assertTrue((Long) read("FabricBytes") >= fabricBytes + 20_000, "written and read, both ends");
            byRule = read("RoutedByRule");
            assertEquals(bindBefore + 1, count(byRule, bindRule), byRule::toString);
            assertEquals(connectBefore + 1, count(byRule, connectRule), byRule::toString);
            assertEquals(bothBefore + 1, count(byRule, bothRule), byRule::toString);
            assertEquals(noRuleBefore + 1, count(byRule, "(no rule)"), byRule::toString);
            assertEquals(fallbacks + 1, (Long) read("Fallbacks"));
            TabularData reasons = (TabularData) read("FallbackReasons");
            assertTrue(!reasons.isEmpty(), "a fallback names its reason");
            recording.stop();
            Path jfr = dir.resolve("fallback.jfr");
            recording.dump(jfr);
            recording.close();
            java.util.List<jdk.jfr.consumer.RecordedEvent> recorded = jdk.jfr.consumer.RecordingFile.readAllEvents(jfr)
                    .stream().filter(e -> e.getEventType().getName().equals("io.rdmanio.Fallback"))
                    .collect(java.util.stream.Collectors.toList());
            assertEquals(1, recorded.size(), recorded::toString);
            assertTrue(recorded.get(0).getString("remote").contains("127.0.0.2"), recorded::toString);
            assertTrue(reasons.containsKey(new Object[] {recorded.get(0).getString("reason")}),
                    () -> recorded + " against " + reasons);
            assertTrue(count(read("ConnectionsByFabric"), "loopback") >= 2);
            assertTrue(count(read("BytesByFabric"), "loopback") >= 20_000);
            assertEquals(0L, read("ReceiverNotReady"));
            assertTrue((Long) read("CreditStalls") >= 0);
            // Gauges: both ends of the fabric connection are open now; closed, and delivered, they are gone.
            assertEquals(2L, count(read("OpenConnectionsByFabric"), "loopback"));
            assertEquals(2L, (Long) read("OpenFabricConnections"));
            c.close();
            a.close();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while ((Long) read("OpenFabricConnections") != 0L) {
                assertTrue(System.nanoTime() - deadline < 0, "closed connections are torn down: "
                        + read("OpenConnectionsByFabric"));
                Thread.sleep(10);
            }
        }
    }
}
