package io.rdmanio.selector.config;

import io.rdmanio.core.engine.EngineConfig;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.resolver.Resolution;
import io.rdmanio.core.resolver.Resolver;
import io.rdmanio.core.resolver.ResolverInterfaces;
import io.rdmanio.core.resolver.ResolverSettings;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * {@code ./rdmanio doctor}: checks the configuration in the {@code rdmanio.*} system properties the way the provider
 * would at start, and says which fabrics this machine can open and what {@code auto} would choose.
 * {@code doctor HOST:PORT ...} also asks the resolver about each address and says which fabric an {@code auto}
 * connect would take, and why. It says, per network interface, how the resolver reaches peers there or why it
 * cannot ({@link #interfaces}). Its RDMA section (the disni fabric's own report) lists devices, ports, link state, GIDs, the
 * memory-lock limit, whether libdisni loads and the rdma-core packages, with the fix for each problem.
 * {@code --json} prints the same as one JSON object.
 *
 * <p>Ends with the problems found, each with its fix. Exits 0 when there are none; 1 when there is one: the
 * configuration does not load (the message names the file, line and reason), an {@code rdmanio.*} property is
 * unknown, the configured fabric cannot open here, {@code auto} has no fabric for routed connections, the resolver
 * settings are wrong, or (only when {@code rdmanio.fabric=disni}) an RDMA check failed; 2 when an argument is not
 * {@code HOST:PORT} or {@code --json}.
 */
public final class Doctor {

    /** The JSON flag. */
    static final String JSON = "--json";

    private Doctor() {
    }

    public static void main(String[] args) {
        boolean json = false;
        List<String> addresses = new ArrayList<>();
        for (String arg : args) {
            if (arg.equals(JSON)) {
                json = true;
            } else {
                addresses.add(arg);
            }
        }
        Findings findings = new Findings();
        PrintStream out = findings.section("configuration");
        out.println("java " + System.getProperty("java.version") + " (" + System.getProperty("java.home") + ")");
        for (String line : KnownProperties.warnings(System.getProperties().stringPropertyNames())) {
            findings.problems.add(line);
        }
        int status = run(System::getProperty, SystemFabrics.INSTANCE, out, findings.problems);
        fabricReport(FabricChoice.SHM, out);
        String fabric = System.getProperty(ConfigLoader.FABRIC, FabricChoice.AUTO);
        int rdma = fabricReport(FabricChoice.DISNI, findings.section("rdma"));
        if (rdma > 0 && fabric.equals(FabricChoice.DISNI)) {
            findings.problems.add("rdmanio.fabric=disni, and the RDMA checks found " + rdma + " problem(s) (the"
                    + " 'rdma PROBLEM' lines, each with its fix)");
        } else if (rdma > 0) {
            findings.note = "the " + rdma + " 'rdma PROBLEM' line(s) above matter only where the disni fabric is"
                    + " wanted: " + (fabric.equals(FabricChoice.AUTO)
                        ? "with rdmanio.fabric=auto, peers on other hosts go over TCP until they are fixed"
                        : "this configuration (rdmanio.fabric=" + fabric + ") does not use it");
        }
        if (status == 0) {
            try {
                interfaces(ResolverSettings.load(System::getProperty), ResolverInterfaces.system(),
                        findings.section("resolver interfaces"));
            } catch (IllegalArgumentException e) {
                findings.section("resolver interfaces").println("resolver settings: ERROR " + e.getMessage());
                findings.problems.add("resolver settings: " + e.getMessage());
                status = 1;
            }
        }
        if (status == 0 && !addresses.isEmpty()) {
            status = resolve(fabric, SystemFabrics.INSTANCE, AutoRouting::systemResolver, addresses,
                    findings.section("resolve"));
        }
        if (status == 0 && !findings.problems.isEmpty()) {
            status = 1;
        }
        System.out.print(json ? findings.json(version(), status) : findings.text(version(), status));
        System.out.flush();
        System.exit(status);
    }

    /** This build's version, from the jar's manifest; "unknown" when run from class directories. */
    /**
     * A fabric's own lines for this machine (the fabric describes itself); returns its problem count, 0 when the
     * fabric is not in this build (said on one line).
     */
    static int fabricReport(String fabric, PrintStream out) {
        try {
            return Fabrics.provider(fabric).report(out);
        } catch (java.io.IOException | RuntimeException e) {
            out.println(fabric + ": not in this build (" + e.getMessage() + ")");
            return 0;
        }
    }

    /** Whether an API the agent routes is left to TCP by its switch. */
    private static String apiState(Function<String, String> properties, String property) {
        return RoutedApis.switchedOff(properties.apply(property)) ? "not (-D" + property + "=false)" : "too";
    }

    static String version() {
        String v = Doctor.class.getPackage().getImplementationVersion();
        return v == null ? "unknown (not run from the agent jar)" : v;
    }

    /** The doctor's output by section, and the problems found, printed as text or as one JSON object. */
    static final class Findings {

        final List<String> problems = new ArrayList<>();
        /** Said before the verdict when not a problem of this configuration (RDMA checks that failed), or null. */
        String note;
        private final Map<String, ByteArrayOutputStream> sections = new LinkedHashMap<>();
        private final Map<String, PrintStream> streams = new LinkedHashMap<>();

        PrintStream section(String name) {
            return streams.computeIfAbsent(name, n -> {
                ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                sections.put(n, bytes);
                return new PrintStream(bytes, true, StandardCharsets.UTF_8);
            });
        }

        List<String> lines(String section) {
            String text = sections.get(section).toString(StandardCharsets.UTF_8);
            return text.isEmpty() ? List.of() : List.of(text.split("\n"));
        }

        String text(String version, int status) {
            StringBuilder b = new StringBuilder("rdmanio " + version + "\n");
            for (String name : sections.keySet()) {
                for (String line : lines(name)) {
                    b.append(line).append('\n');
                }
            }
            if (note != null) {
                b.append("doctor: ").append(note).append('\n');
            }
            if (problems.isEmpty()) {
                b.append("doctor: no problems found (exit ").append(status).append(")\n");
            } else {
                b.append("doctor: ").append(problems.size()).append(" problem(s) (exit ").append(status)
                        .append("):\n");
                for (String p : problems) {
                    b.append("  - ").append(p).append('\n');
                }
            }
            return b.toString();
        }

        String json(String version, int status) {
            JsonWriter w = new JsonWriter().beginObject();
            w.member("version", version).member("status", status);
            w.member("problems", problems);
            if (note != null) {
                w.member("note", note);
            }
            w.beginObject("sections");
            for (String name : sections.keySet()) {
                w.member(name, lines(name));
            }
            return w.endObject().endObject().finish();
        }
    }

    /**
     * Says, for each network interface the resolver would use, how it reaches peers there (IPv4 broadcast, whether
     * the interface's or computed from the prefix, IPv6 multicast) or why it cannot (down, point-to-point, no
     * broadcast with a /31 or /32 prefix, no multicast), and what to do about it.
     */
    static void interfaces(ResolverSettings settings, List<ResolverInterfaces.Nic> nics, PrintStream out) {
        for (String line : ResolverInterfaces.report(settings, nics)) {
            out.println(line);
        }
    }

    /**
     * Asks the resolver about each {@code HOST:PORT} and prints its answer, where the answer came from, and what an
     * {@code auto} connect would do with it.
     *
     * @return 0, or 2 when an argument is not {@code HOST:PORT}
     */
    static int resolve(String fabric, FabricDirectory fabrics, Supplier<Resolver> resolvers, List<String> addresses,
                       PrintStream out) {
        Resolver resolver = resolvers.get();
        AutoRouting auto = AutoRouting.with(fabric, fabrics, resolver);
        if (resolver == null) {
            out.println("resolver: cannot start (see the warning above): auto connects go to TCP");
            return 0;
        }
        out.println("resolver: " + resolver.settings());
        for (String a : addresses) {
            InetSocketAddress address;
            try {
                address = parse(a);
            } catch (IllegalArgumentException | UnknownHostException e) {
                out.println("resolve " + a + ": not HOST:PORT (" + e.getMessage() + ")");
                return 2;
            }
            Resolution r = resolver.resolve(address);
            out.println("resolve " + a + ": " + (r.found() ? r.endpoints() + ", incarnation "
                    + Long.toUnsignedString(r.incarnation(), 16) : "no fabric listener") + " [" + r.source()
                    + (r.found() && !r.verified() ? "; unauthenticated: without rdmanio.resolver.key any host on the"
                        + " subnet could have sent it" : "") + "]");
            AutoRouting.Choice choice = auto.choose(r);
            if (choice.fabric() == null && r.found() && r.origin() == Resolution.Origin.ANNOUNCEMENT) {
                // As an auto connect does: one unauthenticated announcement does not decide; the listener is asked.
                r = resolver.reask(address, r);
                out.println("  an unauthenticated announcement names no usable fabric; asked again: " + r);
                choice = auto.choose(r);
            }
            out.println("  an auto connect to " + a + " would use: " + (choice.fabric() == null
                    ? "tcp, because " + choice.why() : choice.fabric() + " to " + choice.target()
                    + ", because " + choice.why()));
        }
        out.println("resolver counters: " + resolver.stats());
        return 0;
    }

    private static InetSocketAddress parse(String hostPort) throws UnknownHostException {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0 || colon == hostPort.length() - 1) {
            throw new IllegalArgumentException("expected HOST:PORT");
        }
        String host = hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("the port is not a number");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is out of range");
        }
        return new InetSocketAddress(InetAddress.getByName(host), port);
    }

    static int run(Function<String, String> properties, FabricDirectory fabrics, PrintStream out) {
        return run(properties, fabrics, out, new ArrayList<>());
    }

    /**
     * Prints the fabrics, what {@code auto} would use and the configuration, adding each problem found to
     * {@code problems}.
     *
     * @return 0, or 1 when the configuration does not load
     */
    static int run(Function<String, String> properties, FabricDirectory fabrics, PrintStream out,
                   List<String> problems) {
        String disni = null;
        String shm = null;
        for (String name : FabricChoice.names()) {
            if (name.equals(FabricChoice.AUTO)) {
                continue;
            }
            String reason = fabrics.unavailableReason(name);
            out.println("fabric " + name + ": " + (reason == null ? "available" : "unavailable: " + reason));
            if (name.equals(FabricChoice.DISNI)) {
                disni = reason;
            } else if (name.equals(FabricChoice.SHM)) {
                shm = reason;
            }
        }
        String auto = disni == null ? "disni"
                : shm == null ? "shm for peers on this host; nothing for other peers"
                : "nothing: a routed connection fails; use -Drdmanio.fabric=loopback for peers in one JVM";
        out.println("rdmanio.fabric=auto would use: " + auto);
        RdmanioConfig config;
        EngineConfig engine;
        try {
            config = ConfigLoader.load(properties, fabrics);
            engine = ConfigLoader.ensureEngineSettings(properties);
        } catch (ConfigException e) {
            out.println("configuration: ERROR " + e.getMessage());
            problems.add("the configuration does not load: " + e.getMessage());
            return 1;
        }
        out.println("rdmanio.fabric=" + config.fabric());
        Rules rules = ResolvingRouter.rulesOf(config.router());
        boolean routes = rules != null && rules != Rules.NONE;
        if (routes) {
            Path file = Path.of(rules.file());
            out.println("rdmanio.rules=" + file + (file.isAbsolute() ? "" : " (" + file.toAbsolutePath() + ")")
                    + ": " + rules.size()
                    + " rules, no errors" + (rules.hasAutoConnectRule() ? "; auto connects ask the resolver" : ""));
            out.println("routed APIs: NIO channels; with the agent, java.net sockets " + apiState(properties,
                "rdmanio.javaNet") + " and NIO.2 asynchronous channels " + apiState(properties, "rdmanio.asyncChannels")
                    + (rules.routesNothing() ? " (no rule routes to a fabric: all stay on TCP)" : ""));
        } else {
            out.println("rdmanio.rules is not set: every connection stays on the JDK's TCP");
        }
        out.println("rdmanio.stats=" + (config.statsFile() == null ? "(not set)" : config.statsFile()));
        String fabric = config.fabric();
        if (!fabric.equals(FabricChoice.AUTO)) {
            String reason = fabrics.unavailableReason(fabric);
            if (reason != null) {
                problems.add("rdmanio.fabric=" + fabric + " cannot open here: " + reason + "; "
                        + (fabric.equals(FabricChoice.DISNI)
                            ? "for peers on this host use -Drdmanio.fabric=shm (or auto); to try real verbs without"
                                + " RDMA hardware, run the program inside `./rdmanio vm -- ...` (soft-RoCE)"
                            : "use -Drdmanio.fabric=auto, or fix the cause above"));
            }
        } else if (routes && disni != null && shm != null) {
            problems.add("rdmanio.fabric=auto has no fabric for the routed connections (disni: " + disni + "; shm: "
                    + shm + ")");
        }
        effective(properties, engine, out);
        return 0;
    }

    /**
     * The effective configuration: every known {@code rdmanio.*} property that is set, with its value (a key's value
     * is not shown), and the engine's tunables as the engine will use them.
     */
    static void effective(Function<String, String> properties, EngineConfig engine, PrintStream out) {
        out.println("effective configuration:");
        for (String name : new TreeSet<>(KnownProperties.NAMES)) {
            String value = properties.apply(name);
            if (value != null) {
                out.println("  " + name + "=" + (name.equals("rdmanio.resolver.key")
                        ? "(set, " + value.length() + " characters, not shown)" : value));
            }
        }
        boolean slotSet = properties.apply(ConfigLoader.SLOT_SIZE) != null;
        out.println("  engine: slotSize " + (slotSet ? engine.slotSize() + " (set)"
                    : "unset: the fabric's preference (shm 65536, loopback and disni " + engine.slotSize() + ")")
                + ", ringDepth " + engine.ringDepth() + ", controlSlots " + engine.controlSlots() + ", spinMicros "
                + engine.spinMicros() + ", lingerMillis " + engine.lingerMillis() + ", lingerMaxBytes "
                + engine.lingerMaxBytes());
    }
}
