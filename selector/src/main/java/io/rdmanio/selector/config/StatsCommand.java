package io.rdmanio.selector.config;

import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * {@code ./rdmanio stats PID}: what a running JVM's rdmanio is doing, read through the Attach API and the JDK's
 * local management agent (the JMX bean {@value TransportStats#OBJECT_NAME}): the configuration, the gauges and
 * counters, and the connection table, one line per fabric connection, as {@code vma_stats} prints a process's
 * sockets. Needs the same user as the process (the Attach API's rule) and a JDK, not a bare JRE.
 *
 * <p>Exit status: 0 with the table, 1 when the process has no rdmanio to report (not loaded, or nothing routed
 * yet), 2 on a usage error or when the process cannot be attached.
 */
public final class StatsCommand {

    private StatsCommand() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the command; returns its exit status. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length != 1 || !args[0].matches("[0-9]{1,10}")) {
            err.println("usage: ./rdmanio stats PID   (the process id of a running JVM, as jps or pgrep list it)");
            return 2;
        }
        String pid = args[0];
        if (ProcessHandle.of(Long.parseLong(pid)).isEmpty()) {
            err.println("rdmanio stats: there is no process " + pid);
            return 2;
        }
        if (!looksLikeJvm(pid)) {
            err.println("rdmanio stats: process " + pid + " is not a JVM (no libjvm among its mappings)");
            return 2;
        }
        VirtualMachine vm;
        try {
            vm = VirtualMachine.attach(pid);
        } catch (AttachNotSupportedException | IOException e) {
            err.println("rdmanio stats: cannot attach to process " + pid + ": " + e.getMessage()
                + " (it must be a running JVM of the same user; a JVM started with -XX:+DisableAttachMechanism"
                + " cannot be read)");
            return 2;
        }
        try {
            String address = vm.startLocalManagementAgent();
            try (JMXConnector jmx = JMXConnectorFactory.connect(new JMXServiceURL(address))) {
                return print(pid, jmx.getMBeanServerConnection(), out, err);
            }
        } catch (IOException e) {
            err.println("rdmanio stats: cannot read process " + pid + " through its management agent: " + e);
            return 2;
        } finally {
            try {
                vm.detach();
            } catch (IOException e) {
                // nothing held
            }
        }
    }

    /** Whether the process maps a libjvm; true when its mappings cannot be read (the attach then tells). */
    private static boolean looksLikeJvm(String pid) {
        try (java.util.stream.Stream<String> maps = java.nio.file.Files.lines(
                java.nio.file.Path.of("/proc", pid, "maps"))) {
            return maps.anyMatch(l -> l.contains("/libjvm."));
        } catch (IOException | java.io.UncheckedIOException | SecurityException e) {
            return true;
        }
    }

    private static int print(String pid, MBeanServerConnection server, PrintStream out, PrintStream err)
            throws IOException {
        ObjectName name;
        Map<String, Object> a = new TreeMap<>();
        try {
            name = new ObjectName(TransportStats.OBJECT_NAME);
            for (javax.management.Attribute attr : server.getAttributes(name, new String[] {"Fabric", "Rules",
                "OpenConnectionsByFabric", "ConnectionsByFabric", "BytesByFabric", "TcpConnections", "TcpBytes",
                "Fallbacks", "FallbackReasons", "CreditStalls", "ReceiverNotReady", "BypassedTransports",
                "RoutedApis", "Connections"}).asList()) {
                a.put(attr.getName(), map(attr.getValue()));
            }
        } catch (InstanceNotFoundException e) {
            err.println("rdmanio stats: process " + pid + " has no rdmanio to report: the bean "
                + TransportStats.OBJECT_NAME + " is not registered (the agent or provider is not loaded there, or"
                + " it has not routed a socket yet: the bean appears with the first routed connection)");
            return 1;
        } catch (JMException e) {
            err.println("rdmanio stats: reading " + TransportStats.OBJECT_NAME + " of process " + pid + " failed: "
                + e);
            return 2;
        }
        out.printf(Locale.ROOT, "rdmanio in process %s: fabric=%s, rules=%s%n", pid, a.get("Fabric"),
            emptyAsNone(a.get("Rules")));
        out.printf(Locale.ROOT, "  open fabric connections: %s; opened: %s; bytes: %s%n",
            a.get("OpenConnectionsByFabric"), a.get("ConnectionsByFabric"), a.get("BytesByFabric"));
        out.printf(Locale.ROOT, "  TCP: %s connections, %s bytes; fallbacks to TCP: %s %s%n", a.get("TcpConnections"),
            a.get("TcpBytes"), a.get("Fallbacks"), a.get("FallbackReasons"));
        out.printf(Locale.ROOT, "  credit stalls: %s; receiver not ready: %s; bypassed native transports: %s%n",
            a.get("CreditStalls"), a.get("ReceiverNotReady"), a.get("BypassedTransports"));
        out.printf(Locale.ROOT, "  routed APIs: %s%n", a.get("RoutedApis"));
        CompositeData[] rows = (CompositeData[]) a.get("Connections");
        table(rows == null ? new CompositeData[0] : rows, out);
        return 0;
    }

    /** A JMX map (tabular data of key and value rows) as {@code {key=value, ...}} in key order; others as is. */
    private static Object map(Object o) {
        if (!(o instanceof TabularData)) {
            return o;
        }
        Map<String, Object> m = new TreeMap<>();
        for (Object row : ((TabularData) o).values()) {
            CompositeData r = (CompositeData) row;
            m.put(String.valueOf(r.get("key")), r.get("value"));
        }
        return m;
    }

    private static String emptyAsNone(Object o) {
        return o == null || o.toString().isEmpty() ? "(none)" : o.toString();
    }

    /** The connection table, columns as wide as their widest cell. */
    static void table(CompositeData[] rows, PrintStream out) {
        String[] header = {"FABRIC", "SIDE", "LOCAL", "REMOTE", "STATE", "WRITTEN", "READ", "CREDIT", "STAGED",
            "AGE"};
        String[] keys = {"fabric", "side", "local", "remote", "state", "bytesWritten", "bytesRead", "sendCredit",
            "stagedFrames", "ageMillis"};
        List<String[]> lines = new ArrayList<>();
        lines.add(header);
        for (CompositeData r : rows) {
            String[] cells = new String[keys.length];
            for (int i = 0; i < keys.length; i++) {
                Object v = r.get(keys[i]);
                cells[i] = keys[i].equals("ageMillis") ? age((Long) v) : String.valueOf(v);
            }
            lines.add(cells);
        }
        int[] width = new int[header.length];
        for (String[] l : lines) {
            for (int i = 0; i < l.length; i++) {
                width[i] = Math.max(width[i], l[i].length());
            }
        }
        out.println(rows.length + " fabric connection" + (rows.length == 1 ? "" : "s") + ":");
        for (String[] l : lines) {
            StringBuilder sb = new StringBuilder(" ");
            for (int i = 0; i < l.length; i++) {
                sb.append(' ');
                boolean number = i >= 5 && i <= 8;
                String pad = " ".repeat(width[i] - l[i].length());
                sb.append(number ? pad + l[i] : i == l.length - 1 ? l[i] : l[i] + pad);
            }
            out.println(sb.toString().stripTrailing());
        }
    }

    private static String age(long millis) {
        if (millis < 10_000) {
            return millis + "ms";
        }
        long s = millis / 1000;
        return s < 3600 ? s / 60 + "m" + s % 60 + "s" : s / 3600 + "h" + s / 60 % 60 + "m";
    }
}
