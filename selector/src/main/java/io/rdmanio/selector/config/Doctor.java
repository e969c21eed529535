package io.rdmanio.selector.config;

import io.rdmanio.core.resolver.Resolution;
import io.rdmanio.core.resolver.Resolver;
import io.rdmanio.core.resolver.ResolverInterfaces;
import io.rdmanio.core.resolver.ResolverSettings;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * {@code ./rdmanio doctor}: checks the configuration in the {@code rdmanio.*} system properties the way the provider
 * would at start, and says which fabrics this machine can open and what {@code auto} would choose.
 * {@code doctor HOST:PORT ...} also asks the resolver about each address and says which fabric an {@code auto}
 * connect would take, and why. It says, per network interface, how the resolver reaches peers there or why it
 * cannot ({@link #interfaces}). Its RDMA section ({@link RdmaReport}) lists devices, ports, link state, GIDs, the
 * memory-lock limit, whether libdisni loads and the rdma-core packages, with the fix for each problem.
 *
 * <p>Exits 0 when the configuration loads, 1 when it does not (the message names the file, line and reason), 2
 * when an argument is not {@code HOST:PORT}.
 */
public final class Doctor {

    private Doctor() {
    }

    public static void main(String[] args) {
        int status = run(System::getProperty, SystemFabrics.INSTANCE, System.out);
        RdmaReport.system().print(System.out);
        if (status == 0) {
            try {
                interfaces(ResolverSettings.load(System::getProperty), ResolverInterfaces.system(), System.out);
            } catch (IllegalArgumentException e) {
                System.out.println("resolver settings: ERROR " + e.getMessage());
                status = 1;
            }
        }
        if (status == 0 && args.length > 0) {
            status = resolve(System.getProperty(ConfigLoader.FABRIC, FabricChoice.AUTO), SystemFabrics.INSTANCE,
                    AutoRouting::systemResolver, Arrays.asList(args), System.out);
        }
        System.exit(status);
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
        out.println("java " + properties.apply("java.version") + " (" + properties.apply("java.home") + ")");
        String disni = null;
        String shm = null;
        for (String name : FabricChoice.NAMES) {
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
        try {
            config = ConfigLoader.load(properties, fabrics);
        } catch (ConfigException e) {
            out.println("configuration: ERROR " + e.getMessage());
            return 1;
        }
        out.println("rdmanio.fabric=" + config.fabric());
        Rules rules = ResolvingRouter.rulesOf(config.router());
        if (rules != null && rules != Rules.NONE) {
            out.println("rdmanio.rules=" + rules.file() + ": " + rules.size() + " rules, no errors"
                    + (rules.hasAutoConnectRule() ? "; auto connects ask the resolver" : ""));
        } else {
            out.println("rdmanio.rules is not set: every connection stays on the JDK's TCP");
        }
        out.println("rdmanio.stats=" + (config.statsFile() == null ? "(not set)" : config.statsFile()));
        return 0;
    }
}
