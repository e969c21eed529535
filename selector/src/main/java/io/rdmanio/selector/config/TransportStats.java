package io.rdmanio.selector.config;

import io.rdmanio.core.Logs;
import io.rdmanio.core.engine.ConnectionInfo;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.EngineStats;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToLongFunction;
import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.slf4j.Logger;

/**
 * The JMX view of {@link RunStats}, {@link RouteStats} and the fabric engines' counters, registered once per
 * process on the platform MBean server as {@value #OBJECT_NAME}. Thread-safe: every read sums the counters afresh.
 *
 * <p>The bean is registered when the first connection is routed, not when the configuration loads: starting the
 * platform MBean server costs a JVM about 50 ms and some 500 classes, which a program that never opens a routed
 * socket should not pay at start.
 */
public final class TransportStats implements TransportStatsMXBean {

    public static final String OBJECT_NAME = "io.rdmanio:type=Transport";

    private static final Logger LOG = Logs.get(TransportStats.class);
    private static final Object LOCK = new Object();

    // -- LOCK
    private static TransportStats registered;
    /** The configuration the bean reports once registered: the last one loaded. */
    private static RdmanioConfig pending;
    /** Set once registration was tried (whatever its outcome), so that the routed path checks one volatile. */
    private static volatile boolean tried;

    private volatile RdmanioConfig config;

    private TransportStats(RdmanioConfig config) {
        this.config = config;
    }

    /**
     * Remembers the configuration the bean reports (a later configuration replaces the one it reports); the bean
     * itself is registered by {@link #ensureRegistered()}.
     */
    static void configure(RdmanioConfig config) {
        synchronized (LOCK) {
            pending = config;
            if (registered != null) {
                registered.config = config;
            }
        }
    }

    /**
     * Registers the bean once, for the configuration last given to {@link #configure}; called as connections are
     * routed. The registration runs on a thread of its own: creating the platform MBean server takes about 0.1 s
     * here, which the first connection of a JVM would otherwise wait for. A JVM without JMX still runs: the failure
     * is logged, not thrown.
     */
    public static void ensureRegistered() {
        if (tried) {
            return;
        }
        TransportStats bean;
        synchronized (LOCK) {
            if (tried || pending == null) {
                return;
            }
            tried = true;
            bean = new TransportStats(pending);
            // Kept at once, so that a configuration loaded meanwhile reaches the bean.
            registered = bean;
        }
        Thread t = new Thread(() -> register(bean), "rdmanio-jmx");
        t.setDaemon(true);
        t.start();
    }

    private static void register(TransportStats bean) {
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            server.registerMBean(bean, new ObjectName(OBJECT_NAME));
        } catch (InstanceAlreadyExistsException e) {
            // Registered by a copy of rdmanio in another class loader: that one reports.
            LOG.debug("{} is registered already", OBJECT_NAME);
        } catch (JMException | RuntimeException | LinkageError e) {
            LOG.warn("cannot register the JMX bean {}: {}", OBJECT_NAME, e.toString());
        }
    }

    @Override
    public String getFabric() {
        return config.fabric();
    }

    @Override
    public String getRules() {
        Rules r = ResolvingRouter.rulesOf(config.router());
        return r == null || r == Rules.NONE ? "" : r.file();
    }

    @Override
    public long getFabricConnections() {
        return RunStats.get().fabricConnections();
    }

    @Override
    public long getTcpConnections() {
        return RunStats.get().tcpConnections();
    }

    @Override
    public long getFabricBytes() {
        return RunStats.get().fabricBytes();
    }

    @Override
    public long getTcpBytes() {
        return RunStats.get().tcpBytes();
    }

    @Override
    public Map<String, Long> getConnectionsByFabric() {
        return perEngine(EngineStats::connectionsOpened);
    }

    @Override
    public Map<String, Long> getBytesByFabric() {
        return perEngine(s -> s.bytesSent() + s.bytesReceived());
    }

    @Override
    public Map<String, Long> getRoutedByRule() {
        return RouteStats.get().byRule();
    }

    @Override
    public long getFallbacks() {
        return RouteStats.get().fallbacks();
    }

    @Override
    public Map<String, Long> getFallbackReasons() {
        return RouteStats.get().fallbackReasons();
    }

    @Override
    public Map<String, Long> getOpenConnectionsByFabric() {
        Map<String, Long> m = new TreeMap<>();
        for (Map.Entry<String, Engine> e : FabricChoice.usedEngines().entrySet()) {
            int open = e.getValue().openConnections();
            if (open >= 0) {
                m.put(e.getKey(), (long) open);
            }
        }
        return m;
    }

    @Override
    public long getOpenFabricConnections() {
        long total = 0;
        for (long v : getOpenConnectionsByFabric().values()) {
            total += v;
        }
        return total;
    }

    @Override
    public Map<String, String> getBypassedTransports() {
        return BypassedTransports.seen();
    }

    @Override
    public Map<String, String> getRoutedApis() {
        return RoutedApis.states();
    }

    @Override
    public ConnectionRow[] getConnections() {
        List<ConnectionRow> rows = new ArrayList<>();
        for (Map.Entry<String, Engine> e : FabricChoice.usedEngines().entrySet()) {
            List<ConnectionInfo> table;
            try {
                table = e.getValue().connectionTable();
            } catch (RuntimeException ignored) {
                continue; // an engine closed in a half-built state: the others still list theirs
            }
            for (ConnectionInfo c : table) {
                rows.add(new ConnectionRow(c.fabric(), address(c.local()), address(c.remote()),
                    c.client() ? "client" : "server", c.state(), c.bytesWritten(), c.bytesRead(), c.sendCredit(),
                    c.stagedFrames(), c.ageMillis()));
            }
        }
        return rows.toArray(new ConnectionRow[0]);
    }

    private static String address(InetSocketAddress a) {
        return a == null ? "" : a.getAddress() == null ? a.getHostString() + ":" + a.getPort()
            : a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    @Override
    public long getCreditStalls() {
        return sum(EngineStats::creditStalls);
    }

    @Override
    public long getReceiverNotReady() {
        return sum(EngineStats::receiverNotReady);
    }

    private static long sum(ToLongFunction<EngineStats> counter) {
        long total = 0;
        for (long v : perEngine(counter).values()) {
            total += v;
        }
        return total;
    }

    static Map<String, Long> perEngine(ToLongFunction<EngineStats> counter) {
        Map<String, Long> m = new TreeMap<>();
        for (Map.Entry<String, Engine> e : FabricChoice.usedEngines().entrySet()) {
            try {
                m.put(e.getKey(), counter.applyAsLong(e.getValue().stats()));
            } catch (RuntimeException ignored) {
                // An engine closed in a half-built state has no counters to give; the others still count.
            }
        }
        return m;
    }
}
