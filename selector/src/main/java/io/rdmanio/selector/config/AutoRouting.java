package io.rdmanio.selector.config;

import io.rdmanio.core.Logs;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.resolver.Endpoints;
import io.rdmanio.core.resolver.HostIdentity;
import io.rdmanio.core.resolver.Resolution;
import io.rdmanio.core.resolver.Resolver;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * What {@code auto} needs from the resolver: which fabric, if any, this process can use to reach a resolved
 * listener (and at which address), and the registration of this process's fabric listeners so that others can
 * find them.
 *
 * <p>Thread-safe. The resolver is created on first use; if it cannot be (a bad setting found late), {@code auto}
 * connects go to TCP and listeners are not registered, each with a logged reason.
 */
final class AutoRouting {

    private static final Logger LOG = Logs.get(AutoRouting.class);

    /**
     * The fabric chosen for a resolved address.
     *
     * @param fabric the fabric name, or {@code null} for TCP
     * @param target where the fabric connects (the listener's address on that fabric)
     * @param why    for people: why this fabric, or why none
     */
    record Choice(String fabric, InetSocketAddress target, String why) {
    }

    private final String configured;
    private final FabricDirectory directory;
    private final Supplier<Resolver> resolvers;
    private final Supplier<Resolver> existing;

    /**
     * @param configured {@code rdmanio.fabric}: {@code auto} allows any fabric that opens here, a name only that one
     * @param resolvers  gives the resolver, starting it if needed, or {@code null} when there is none
     * @param existing   gives the resolver only if it already runs, else {@code null}
     */
    AutoRouting(String configured, FabricDirectory directory, Supplier<Resolver> resolvers,
                Supplier<Resolver> existing) {
        this.configured = configured;
        this.directory = directory;
        this.resolvers = resolvers;
        this.existing = existing;
    }

    /** With the process's resolver, from the {@code rdmanio.resolver.*} system properties. */
    static AutoRouting system(String configured, FabricDirectory directory) {
        return new AutoRouting(configured, directory, AutoRouting::systemResolver, Resolver::existing);
    }

    /** With one given resolver (tests, the doctor). */
    static AutoRouting with(String configured, FabricDirectory directory, Resolver resolver) {
        return new AutoRouting(configured, directory, () -> resolver, () -> resolver);
    }

    /** The process's resolver from the {@code rdmanio.resolver.*} system properties. */
    static Resolver systemResolver() {
        try {
            return Resolver.get();
        } catch (IOException | RuntimeException e) {
            LOG.warn("rdmanio: the resolver cannot start, so auto routes go to TCP: {}", e.getMessage());
            return null;
        }
    }

    /** The resolver, creating it if needed, or {@code null}. */
    Resolver resolver() {
        return resolvers.get();
    }

    /** The resolver if it runs already, else {@code null}: a connect outside {@code auto} does not start one. */
    Resolver existingResolver() {
        return existing.get();
    }

    /**
     * The fabric for a connection to a listener the resolver describes: disni, then shm, then loopback, the first
     * that the listener serves, that reaches it from here, and that this process can open.
     */
    Choice choose(Resolution r) {
        if (!r.found()) {
            return new Choice(null, null, "no fabric listener (" + r.source() + ")");
        }
        Endpoints e = r.endpoints();
        List<String> reasons = new ArrayList<>(3);
        if (e.disni() != null) {
            String why = unavailable(FabricChoice.DISNI);
            if (why == null) {
                return new Choice(FabricChoice.DISNI, e.disni(), "disni at " + e.disni() + " (" + r.source() + ")");
            }
            reasons.add("disni: " + why);
        }
        if (e.shmRendezvous() != null) {
            HostIdentity here = HostIdentity.local();
            if (!e.shmReachableFrom(here)) {
                reasons.add("shm: the listener is on " + e.shmHost() + ", this process on "
                    + (here == null ? "a host whose identity cannot be read" : here));
            } else {
                String why = unavailable(FabricChoice.SHM);
                if (why == null) {
                    InetSocketAddress target = new InetSocketAddress(r.address().getAddress(),
                        e.shmRendezvous().getPort());
                    return new Choice(FabricChoice.SHM, target, "shm on this host (" + r.source() + ")");
                }
                reasons.add("shm: " + why);
            }
        }
        if (e.loopbackProcess() != null) {
            if (!e.loopbackReachable()) {
                reasons.add("loopback: the listener is in another JVM");
            } else {
                String why = unavailable(FabricChoice.LOOPBACK);
                if (why == null) {
                    return new Choice(FabricChoice.LOOPBACK, r.address(), "loopback in this JVM (" + r.source() + ")");
                }
                reasons.add("loopback: " + why);
            }
        }
        return new Choice(null, null, "the listener serves " + e + ", none usable here: " + String.join("; ", reasons));
    }

    private String unavailable(String fabric) {
        if (!configured.equals(FabricChoice.AUTO) && !configured.equals(fabric)) {
            return "rdmanio.fabric=" + configured;
        }
        return directory.unavailableReason(fabric);
    }

    /**
     * Asks the resolver about {@code peer} (waiting at most its timeout) and chooses. When the answer is an
     * unauthenticated announcement that names no fabric usable here, the listener is asked once more: without a key
     * anyone on the subnet can announce an address, and one such packet must not keep connects on TCP for the whole
     * TTL while the real listener serves a fabric this process can use.
     */
    Choice resolveAndChoose(InetSocketAddress peer) {
        Resolver resolver = resolver();
        if (resolver == null) {
            return new Choice(null, null, "the resolver is not running");
        }
        Resolution r = resolver.resolve(peer);
        Choice c = choose(r);
        if (c.fabric() == null && r.found() && r.origin() == Resolution.Origin.ANNOUNCEMENT) {
            c = choose(resolver.reask(peer, r));
        }
        return c;
    }

    /** The endpoints a client needs to reach a listener of {@code fabric} bound to {@code local}, or {@code null}. */
    static Endpoints endpointsFor(String fabric, InetSocketAddress local) {
        switch (fabric) {
            case FabricChoice.DISNI: {
                InetAddress a = local.getAddress();
                try {
                    a = Fabrics.provider(fabric).reachableAddress(a);
                } catch (IOException e) {
                    // Not in this build: the bound address as it is.
                }
                return Endpoints.disni(new InetSocketAddress(a, local.getPort()));
            }
            case FabricChoice.SHM: {
                HostIdentity host = HostIdentity.local();
                return host == null ? null : Endpoints.shm(host, local);
            }
            case FabricChoice.LOOPBACK:
                return Endpoints.loopback();
            default:
                return null;
        }
    }
}
