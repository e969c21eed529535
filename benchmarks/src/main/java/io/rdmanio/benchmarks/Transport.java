package io.rdmanio.benchmarks;

import io.rdmanio.core.fabric.Fabrics;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A transport the benchmarks run on, and the JVM flags that select it. The benchmark code itself is plain
 * java.nio; only these flags differ between the rows of a table.
 *
 * <p>{@code tcp} is the JDK's own provider (no rdmanio flag at all). The fabric transports use the property
 * activation with a rules file that routes every socket on 127.0.0.1 (and, where an RDMA device is, on the
 * device's address) to the fabric. Every transport runs on 127.0.0.1 except disni, which runs on the address of
 * the network interface an RDMA device serves ({@link #host()}).
 */
public enum Transport {
    TCP(null), LOOPBACK("loopback"), SHM("shm"), DISNI("disni");

    static final String RDMA_PROVIDER = "io.rdmanio.selector.RdmaSelectorProvider";

    private final String fabric;

    Transport(String fabric) {
        this.fabric = fabric;
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Transport of(String label) {
        return valueOf(label.toUpperCase(Locale.ROOT));
    }

    /** The address the disni fabric serves (its RDMA device's), or null when no device has one. */
    private static InetAddress deviceAddress() {
        try {
            InetAddress any = new java.net.InetSocketAddress(0).getAddress();
            InetAddress a = Fabrics.provider("disni").reachableAddress(any);
            return a == null || a.isAnyLocalAddress() ? null : a;
        } catch (java.io.IOException e) {
            return null;
        }
    }

    /** The address servers of this transport bind and clients connect to. */
    public String host() {
        if (this == DISNI) {
            InetAddress a = deviceAddress();
            if (a != null) {
                return a.getHostAddress();
            }
        }
        return "127.0.0.1";
    }

    /** Whether client and server must share one JVM (the loopback fabric connects only within a JVM). */
    public boolean inProcessOnly() {
        return this == LOOPBACK;
    }

    /** The flags of a JVM on this transport; {@code rules} is the routing file for the fabric transports. */
    public List<String> jvmFlags(Path rules) {
        List<String> flags = new ArrayList<>();
        if (fabric != null) {
            flags.add("-Djava.nio.channels.spi.SelectorProvider=" + RDMA_PROVIDER);
            flags.add("--add-exports");
            flags.add("java.base/sun.nio.ch=ALL-UNNAMED");
            flags.add("-Drdmanio.rules=" + rules);
            flags.add("-Drdmanio.fabric=" + fabric);
            // The agent jar carries the SLF4J API without a binding: keep its start-up notice out of the tables.
            flags.add("-Dslf4j.internal.verbosity=ERROR");
        }
        flags.add("-Dbench.transport=" + label());
        return flags;
    }

    /**
     * The command line of a JVM on this transport, up to its main class: this JVM's java, the given heap and extra
     * flags, {@link #jvmFlags}, and this JVM's class path.
     */
    public List<String> javaCommand(Path rules, String... extraFlags) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of(extraFlags));
        cmd.addAll(jvmFlags(rules));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        return cmd;
    }

    /** Why this transport cannot run on this machine, or null when it can. */
    public String unavailableReason() {
        switch (this) {
            case SHM:
                return Files.isDirectory(Path.of("/dev/shm")) && Files.isWritable(Path.of("/dev/shm"))
                        ? null : "/dev/shm is not a writable directory";
            case DISNI:
                Path ib = Path.of("/sys/class/infiniband");
                try (var devices = Files.list(ib)) {
                    if (devices.findAny().isEmpty()) {
                        return "no RDMA device in /sys/class/infiniband (soft-RoCE: rdma link add rxe0 type rxe netdev eth0)";
                    }
                    return deviceAddress() != null ? null
                            : "no RDMA device serves a network interface with an address";
                } catch (IOException e) {
                    return "no RDMA device: /sys/class/infiniband does not exist";
                }
            default:
                return null;
        }
    }

    /**
     * The rules file every fabric run uses: everything on 127.0.0.1 is carried by the fabric, and everything on
     * the RDMA device's address when this machine has one.
     */
    public static Path writeRules(Path dir) throws IOException {
        Path rules = dir.resolve("bench.rules");
        StringBuilder text = new StringBuilder("# rdmanio benchmarks: every socket on these addresses is carried by"
                + " the fabric\nbind    127.0.0.1  *\nconnect 127.0.0.1  *\n");
        if (DISNI.unavailableReason() == null) {
            String device = DISNI.host();
            text.append("bind    ").append(device).append("  *\nconnect ").append(device).append("  *\n");
        }
        Files.writeString(rules, text);
        return rules;
    }

    /**
     * Fails unless this JVM was started for {@code expected}: a table row must never be measured on another
     * transport than the one it names.
     */
    public static void ensureActive(Transport expected) {
        String provider = SelectorProvider.provider().getClass().getName();
        boolean rdma = provider.equals(RDMA_PROVIDER);
        if (rdma != (expected != TCP)) {
            throw new IllegalStateException("transport " + expected.label() + " asked for, but this JVM's "
                    + "SelectorProvider is " + provider + " (start it with Transport.jvmFlags)");
        }
        String fabric = System.getProperty("rdmanio.fabric");
        if (expected.fabric != null && !expected.fabric.equals(fabric)) {
            throw new IllegalStateException("transport " + expected.label() + " asked for, but -Drdmanio.fabric="
                    + fabric);
        }
    }
}
