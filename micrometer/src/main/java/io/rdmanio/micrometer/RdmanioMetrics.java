package io.rdmanio.micrometer;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.lang.management.ManagementFactory;
import java.util.List;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;

/**
 * Binds rdmanio's counters and gauges to a Micrometer registry: {@code new RdmanioMetrics().bindTo(registry)}.
 *
 * <ul>
 *   <li>{@code rdmanio.connections.open} (gauge, tag {@code fabric}): fabric connections held now, open or closed
 *       and still delivering;</li>
 *   <li>{@code rdmanio.connections} (counter, tag {@code transport} = {@code fabric} or {@code tcp}): connections
 *       opened, each end this JVM holds;</li>
 *   <li>{@code rdmanio.bytes} (counter, tag {@code transport}): payload bytes the application's channels wrote and
 *       read;</li>
 *   <li>{@code rdmanio.fallbacks} (counter): clients meant for a fabric that connected over TCP;</li>
 *   <li>{@code rdmanio.credit.stalls} (counter): writes that found no send credit;</li>
 *   <li>{@code rdmanio.receiver.not.ready} (counter): frames that found no posted receive (0 unless a bug).</li>
 * </ul>
 *
 * <p>Values are read from rdmanio's JMX bean {@value #OBJECT_NAME} on the platform MBean server, so this binder
 * needs no class of rdmanio's and works whichever class loader the agent or provider was loaded in. Until the bean
 * is registered (rdmanio registers it at the first connection it routes) the gauges read 0 and the counters stay
 * at 0. Thread-safe; reads happen when the registry is scraped.
 */
public final class RdmanioMetrics implements MeterBinder {

    /** The name of rdmanio's JMX bean. */
    public static final String OBJECT_NAME = "io.rdmanio:type=Transport";

    /** The fabrics rdmanio ships; a gauge each, 0 for a fabric this JVM does not use. */
    static final List<String> FABRICS = List.of("shm", "disni", "loopback");

    private final MBeanServer server;
    private final ObjectName name;
    private final Iterable<Tag> tags;

    public RdmanioMetrics() {
        this(Tags.empty());
    }

    /** With {@code tags} added to every meter. */
    public RdmanioMetrics(Iterable<Tag> tags) {
        this.server = ManagementFactory.getPlatformMBeanServer();
        try {
            this.name = new ObjectName(OBJECT_NAME);
        } catch (JMException e) {
            throw new IllegalStateException(e);
        }
        this.tags = tags;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (String fabric : FABRICS) {
            Gauge.builder("rdmanio.connections.open", this, m -> m.entry("OpenConnectionsByFabric", fabric))
                .tags(tags).tag("fabric", fabric)
                .description("fabric connections held now: open, or closed and still delivering")
                .baseUnit("connections").register(registry);
        }
        counter(registry, "rdmanio.connections", "FabricConnections", "fabric", "connections opened", "connections");
        counter(registry, "rdmanio.connections", "TcpConnections", "tcp", "connections opened", "connections");
        counter(registry, "rdmanio.bytes", "FabricBytes", "fabric", "payload bytes written and read", "bytes");
        counter(registry, "rdmanio.bytes", "TcpBytes", "tcp", "payload bytes written and read", "bytes");
        counter(registry, "rdmanio.fallbacks", "Fallbacks", null, "clients meant for a fabric that used TCP", null);
        counter(registry, "rdmanio.credit.stalls", "CreditStalls", null, "writes that found no send credit", null);
        counter(registry, "rdmanio.receiver.not.ready", "ReceiverNotReady", null,
            "frames that found no posted receive (0 unless a bug)", null);
    }

    private void counter(MeterRegistry registry, String meter, String attribute, String transport,
            String description, String unit) {
        FunctionCounter.Builder<RdmanioMetrics> b = FunctionCounter.builder(meter, this, m -> m.number(attribute))
            .tags(tags).description(description);
        if (transport != null) {
            b.tag("transport", transport);
        }
        if (unit != null) {
            b.baseUnit(unit);
        }
        b.register(registry);
    }

    /** A numeric attribute of the bean; 0 while it is not registered or cannot be read. */
    double number(String attribute) {
        Object v = attribute(attribute);
        return v instanceof Number ? ((Number) v).doubleValue() : 0;
    }

    /** One key of a map attribute of the bean; 0 when absent. */
    double entry(String attribute, String key) {
        Object v = attribute(attribute);
        if (v instanceof TabularData) {
            CompositeData row = ((TabularData) v).get(new Object[] {key});
            Object value = row == null ? null : row.get("value");
            return value instanceof Number ? ((Number) value).doubleValue() : 0;
        }
        return 0;
    }

    private Object attribute(String attribute) {
        try {
            return server.isRegistered(name) ? server.getAttribute(name, attribute) : null;
        } catch (JMException | RuntimeException e) {
            return null;
        }
    }
}
