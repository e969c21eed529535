package io.rdmanio.selector.config;

import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.resolver.Resolution;
import io.rdmanio.core.resolver.Resolver;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@link EngineSource} for {@code rdmanio.fabric}: a fixed fabric, or {@code auto}.
 *
 * <p>{@code auto} takes disni when that fabric can be opened here, else shm when the peer is on this host (a
 * listener is always on this host), else fails the operation with an IOException that names, for each fabric, why
 * it cannot carry the connection. Availability is asked of the fabric providers at each decision, so a fabric
 * that becomes usable (a device brought up) is taken without a restart.
 *
 * <p>With the resolver ({@link AutoRouting}): a connect to an address the resolver has an answer for uses the
 * fabric that answer names (see {@link AutoRouting#choose}), and a listener's engine registers it with the
 * resolver so that {@code auto} connects elsewhere find it.
 *
 * <p>Thread-safe. Engines handed out are remembered, process-wide, for the run summary.
 */
final class FabricChoice implements EngineSource {

    static final String AUTO = "auto";
    static final String DISNI = "disni";
    static final String SHM = "shm";
    static final String LOOPBACK = "loopback";

    /** The names this project's fabrics have, after {@code auto}: the order messages and doctor list them in. */
    private static final List<String> SHIPPED = List.of(AUTO, DISNI, SHM, LOOPBACK);

    /**
     * The values {@code rdmanio.fabric} accepts: {@code auto}, this project's fabrics, then every other fabric a
     * {@link io.rdmanio.core.fabric.FabricProvider} on the class path offers (its service line is all a new fabric
     * needs to be named here; {@code auto} chooses among disni and shm only).
     */
    /** Whether {@code rdmanio.fabric} may name {@code name} (providers are looked up only for other names). */
    static boolean accepts(String name) {
        return SHIPPED.contains(name) || Fabrics.names().contains(name);
    }

    static List<String> names() {
        List<String> names = new ArrayList<>(SHIPPED);
        for (String name : Fabrics.names()) {
            if (!names.contains(name)) {
                names.add(name);
            }
        }
        return names;
    }

    // Process-wide: every provider instance shares the engines of the engine module, and the summary written
    // at exit reports all of them.
    private static final Map<String, Engine> USED = new ConcurrentHashMap<>();

    private final String configured;
    private final FabricDirectory directory;
    /** {@code null}: no resolver (connects choose by {@code rdmanio.fabric} alone, binds are not registered). */
    private final AutoRouting auto;

    FabricChoice(String configured, FabricDirectory directory) {
        this(configured, directory, null);
    }

    FabricChoice(String configured, FabricDirectory directory, AutoRouting auto) {
        if (!accepts(configured)) {
            throw new IllegalArgumentException("not a fabric name: " + configured);
        }
        this.configured = configured;
        this.directory = directory;
        this.auto = auto;
    }

    @Override
    public Engine engineFor(InetSocketAddress peer, boolean listening) throws IOException {
        if (auto != null) {
            return listening ? new RegisteringEngine(chooseByConfiguration(peer, true), auto)
                : engineForResolved(peer);
        }
        return chooseByConfiguration(peer, listening);
    }

    /** The fabric the resolver's cached answer names for {@code peer}, else the configured choice. */
    private Engine engineForResolved(InetSocketAddress peer) throws IOException {
        Resolver resolver = auto.existingResolver();
        Resolution r = resolver == null ? null : resolver.cached(peer);
        if (r == null || !r.found()) {
            return chooseByConfiguration(peer, false);
        }
        AutoRouting.Choice choice = auto.choose(r);
        if (choice.fabric() == null) {
            return chooseByConfiguration(peer, false);
        }
        Engine engine;
        try {
            engine = directory.engine(choice.fabric());
        } catch (IOException e) {
            throw new IOException("the resolver named " + choice.why() + ", but the " + choice.fabric()
                    + " fabric cannot open: " + e.getMessage(), e);
        }
        USED.putIfAbsent(choice.fabric(), engine);
        return new ResolvedEngine(engine, peer, choice.target(), resolver);
    }

    private Engine chooseByConfiguration(InetSocketAddress peer, boolean listening) throws IOException {
        String fabric = configured.equals(AUTO) ? chooseAutomatically(peer, listening) : configured;
        Engine engine;
        try {
            engine = directory.engine(fabric);
        } catch (IOException e) {
            throw new IOException("rdmanio.fabric=" + configured + ": the " + fabric + " fabric cannot carry "
                    + describe(peer, listening) + ": " + e.getMessage(), e);
        }
        USED.putIfAbsent(fabric, engine);
        return engine;
    }

    private String chooseAutomatically(InetSocketAddress peer, boolean listening) throws IOException {
        String disni = directory.unavailableReason(DISNI);
        if (disni == null) {
            return DISNI;
        }
        String shm;
        if (!listening && !isOnThisHost(peer)) {
            shm = "the peer is not on this host";
        } else {
            shm = directory.unavailableReason(SHM);
            if (shm == null) {
                return SHM;
            }
        }
        throw new IOException("rdmanio.fabric=auto: no fabric can carry " + describe(peer, listening)
                + " (disni: " + disni + "; shm: " + shm + "); route it to tcp in the rules file, or name a fabric"
                + " with -Drdmanio.fabric");
    }

    private static boolean isOnThisHost(InetSocketAddress peer) {
        InetAddress address = peer.getAddress();
        if (address == null) {
            return false;
        }
        if (address.isLoopbackAddress() || address.isAnyLocalAddress()) {
            return true;
        }
        try {
            return NetworkInterface.getByInetAddress(address) != null;
        } catch (SocketException e) {
            return false;
        }
    }

    private static String describe(InetSocketAddress peer, boolean listening) {
        return listening ? "a listener on " + peer : "a connection to " + peer;
    }

    /** The configured name: {@code auto} or a fabric's. */
    String configured() {
        return configured;
    }

    /** The engines handed out so far in this process, by fabric name. */
    static Map<String, Engine> usedEngines() {
        return Map.copyOf(USED);
    }

    @Override
    public String toString() {
        return "FabricChoice[" + configured + "]";
    }
}
