package io.rdmanio.core.resolver;

import io.rdmanio.core.Logs;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * Finds out whether a fabric listener serves an address, and where: the question a connect under an {@code auto}
 * rule asks. Answers come from a cache (positive for {@code ttlSeconds}, negative for {@code negativeTtlSeconds}),
 * then from the backends in order: the static file ({@code rdmanio.resolver.file}), directory services added with
 * {@link #addBackend}, and the broadcast resolver. A miss costs at most {@code timeoutMillis}; the negative cache
 * makes the next resolve of the same address cost nothing.
 *
 * <p>The listening side calls {@link #register} when a fabric listener binds and {@link #unregister} when it
 * closes: this process's responder then answers queries for the address, and announces and withdraws it.
 *
 * <p>Thread-safe. Concurrent resolves of one address share one query; {@link #resolveAll} batches many addresses
 * into one query per destination. Never throws on network trouble: a backend that fails is counted and skipped.
 */
public final class Resolver implements AutoCloseable {

    private static final Logger LOG = Logs.get(Resolver.class);

    private static final Object GLOBAL_LOCK = new Object();
    private static Resolver global;

    /** Incarnations: the time in ms in the high bits, so a restarted listener's is larger, and a counter below. */
    private static final AtomicLong LAST_INCARNATION = new AtomicLong();

    private final ResolverSettings settings;
    private final ResolverStats stats = new ResolverStats();
    private final ResolverCache cache;
    private final BroadcastBackend broadcast;
    private final List<ResolverBackend> backends = new CopyOnWriteArrayList<>();
    private final ConcurrentHashMap<InetSocketAddress, CompletableFuture<Resolution>> inFlight =
        new ConcurrentHashMap<>();
    private final ConcurrentHashMap<InetSocketAddress, Long> registered = new ConcurrentHashMap<>();

    /** A resolver with {@code settings}, on the system's UDP sockets. */
    public Resolver(ResolverSettings settings) throws IOException {
        this(settings, DatagramPort.SYSTEM);
    }

    Resolver(ResolverSettings settings, DatagramPort.Factory sockets) throws IOException {
        this.settings = settings;
        this.cache = new ResolverCache(settings, stats);
        if (settings.file() != null) {
            backends.add(new StaticFileBackend(settings.file()));
        }
        this.broadcast = settings.broadcast() ? new BroadcastBackend(settings, stats, cache, sockets) : null;
    }

    /**
     * The process's resolver, configured from the {@code rdmanio.resolver.*} system properties on first use; its
     * counters are the MBean {@code io.rdmanio:type=Resolver}.
     *
     * @throws IllegalArgumentException naming a bad setting
     * @throws IOException              when the static file cannot be read
     */
    public static Resolver get() throws IOException {
        synchronized (GLOBAL_LOCK) {
            if (global == null) {
                Resolver r = new Resolver(ResolverSettings.load(System::getProperty));
                ResolverStatsMBean.tryRegister(r.stats);
                // Peers learn at once that this process's listeners are gone, instead of at their next failed
                // connect. The resolver stays readable (the stats file is written by another hook).
                Runtime.getRuntime().addShutdownHook(new Thread(r::withdrawAll, "rdmanio-resolver-withdraw"));
                global = r;
            }
            return global;
        }
    }

    /** The process's resolver if {@link #get()} made one, else {@code null}; never creates one. */
    public static Resolver existing() {
        synchronized (GLOBAL_LOCK) {
            return global;
        }
    }

    /** A new incarnation, larger than any this process handed out before and than any from an earlier start. */
    public static long newIncarnation() {
        long candidate = System.currentTimeMillis() << 16;
        return LAST_INCARNATION.accumulateAndGet(candidate, (last, c) -> Math.max(last + 1, c));
    }

    /** Adds a backend (a directory service), asked after the static file and before broadcast. */
    public void addBackend(ResolverBackend backend) {
        backends.add(backend);
    }

    // ------------------------------------------------------------------------------------------ listening side

    /**
     * A fabric listener serves {@code address} (a wildcard address serves every address of this host on its
     * port): answer queries for it and announce it. Registering again replaces the endpoints and incarnation.
     *
     * @throws IllegalArgumentException when no fabric endpoint is given, or, when broadcasting, an shm endpoint
     *                                  names no host identity ({@link HostIdentity#local()} is {@code null} until
     *                                  the shm directory exists)
     */
    public void register(InetSocketAddress address, Endpoints endpoints, long incarnation) throws IOException {
        if (endpoints == null || endpoints.fabrics() == 0) {
            throw new IllegalArgumentException("register " + address + ": no fabric endpoint given");
        }
        if (broadcast != null && endpoints.shmRendezvous() != null && endpoints.shmHost() == null) {
            // On the wire an shm record must name its host (ResolverCodec): every peer drops one without it as
            // malformed, and with it the other records of its packet. Accepted here, the address would look
            // unserved everywhere while this call succeeded, the only trace a counter on the other hosts.
            throw new IllegalArgumentException("register " + address + ": the shm endpoint names no host identity,"
                + " so peers could not tell whether they share its host (HostIdentity.local() is null until the shm"
                + " directory, rdmanio.shm.dir or /dev/shm/rdmanio-UID, exists)");
        }
        registered.put(address, incarnation);
        for (ResolverBackend b : backends) {
            b.publish(address, endpoints, incarnation);
        }
        if (broadcast != null) {
            broadcast.publish(address, endpoints, incarnation);
        }
    }

    /** The listener on {@code address} closed: stop answering for it and withdraw it. No-op if not registered. */
    public void unregister(InetSocketAddress address) {
        Long incarnation = registered.remove(address);
        if (incarnation == null) {
            return;
        }
        for (ResolverBackend b : backends) {
            try {
                b.withdraw(address, incarnation);
            } catch (IOException | RuntimeException e) {
                LOG.warn("resolver backend {} failed to withdraw {}", b.name(), address, e);
            }
        }
        if (broadcast != null) {
            broadcast.withdraw(address, incarnation);
        }
    }

    /** Withdraws every address this process registered, as if each listener closed. */
    public void withdrawAll() {
        for (InetSocketAddress a : new ArrayList<>(registered.keySet())) {
            unregister(a);
        }
    }

    // ---------------------------------------------------------------------------------------------- query side

    /** What serves {@code address}: from the cache, else asked of the backends (waiting at most the timeout). */
    public Resolution resolve(InetSocketAddress address) {
        return resolveAll(List.of(address)).get(address);
    }

    /** As {@link #resolve}, for many addresses at once: one query per destination, one timeout for all. */
    public Map<InetSocketAddress, Resolution> resolveAll(Collection<InetSocketAddress> addresses) {
        Map<InetSocketAddress, Resolution> out = new LinkedHashMap<>();
        Map<InetSocketAddress, CompletableFuture<Resolution>> theirs = new LinkedHashMap<>();
        Map<InetSocketAddress, CompletableFuture<Resolution>> mine = new LinkedHashMap<>();
        long now = System.nanoTime();
        for (InetSocketAddress a : addresses) {
            stats.resolves.increment();
            Resolution cached = cache.lookup(a, now);
            if (cached != null) {
                (cached.found() ? stats.cacheHits : stats.negativeHits).increment();
                out.put(a, cached);
                continue;
            }
            CompletableFuture<Resolution> f = new CompletableFuture<>();
            CompletableFuture<Resolution> other = inFlight.putIfAbsent(a, f);
            if (other != null) {
                theirs.put(a, other);
            } else {
                mine.put(a, f);
            }
        }
        if (!mine.isEmpty()) {
            Map<InetSocketAddress, Resolution> found = Map.of();
            try {
                found = ask(mine.keySet());
            } finally {
                // Threads waiting on these addresses are released whatever happened here.
                for (Map.Entry<InetSocketAddress, CompletableFuture<Resolution>> e : mine.entrySet()) {
                    Resolution r = found.get(e.getKey());
                    if (r == null) {
                        r = Resolution.none(e.getKey(), "the resolve failed");
                    }
                    inFlight.remove(e.getKey(), e.getValue());
                    e.getValue().complete(r);
                    out.put(e.getKey(), r);
                }
            }
        }
        for (Map.Entry<InetSocketAddress, CompletableFuture<Resolution>> e : theirs.entrySet()) {
            out.put(e.getKey(), join(e.getKey(), e.getValue()));
        }
        return out;
    }

    private Map<InetSocketAddress, Resolution> ask(Collection<InetSocketAddress> addresses) {
        long start = System.nanoTime();
        long budget = settings.timeoutMillis() * 1_000_000L;
        Map<InetSocketAddress, Resolution> settled = new LinkedHashMap<>();
        List<InetSocketAddress> open = new ArrayList<>(addresses);
        List<ResolverBackend> order = new ArrayList<>(backends);
        if (broadcast != null) {
            order.add(broadcast);
        }
        for (ResolverBackend b : order) {
            if (open.isEmpty()) {
                break;
            }
            long left = budget - (System.nanoTime() - start);
            try {
                Map<InetSocketAddress, Resolution> got = b.resolve(open, Math.max(0, left));
                settled.putAll(got);
                open.removeAll(got.keySet());
            } catch (IOException | RuntimeException e) {
                stats.sendErrors.increment();
                LOG.warn("resolver backend {} failed: {}", b.name(), e.toString());
            }
        }
        long now = System.nanoTime();
        long millis = (now - start) / 1_000_000;
        Map<InetSocketAddress, Resolution> out = new LinkedHashMap<>();
        for (InetSocketAddress a : addresses) {
            Resolution r = settled.get(a);
            if (r == null) {
                stats.misses.increment();
                r = Resolution.none(a, "no answer after " + millis + " ms, " + (settings.retries() + 1)
                    + " tries (" + String.join(", ", names(order)) + ")");
                cache.putNotFound(r, now);
            } else if (r.found()) {
                if (!cache.putFound(r, now)) {
                    // A newer incarnation arrived meanwhile (announcement): it wins.
                    Resolution newer = cache.lookup(a, now);
                    r = newer != null ? newer : r;
                }
            } else {
                cache.putNotFound(r, now);
            }
            out.put(a, r);
        }
        return out;
    }

    private static List<String> names(List<ResolverBackend> backends) {
        List<String> n = new ArrayList<>();
        for (ResolverBackend b : backends) {
            n.add(b.name());
        }
        return n;
    }

    private static Resolution join(InetSocketAddress a, CompletableFuture<Resolution> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Resolution.none(a, "interrupted while another thread resolved it");
        } catch (ExecutionException e) {
            return Resolution.none(a, "resolve failed: " + e.getCause());
        }
    }

    /**
     * Asks again about {@code address} when {@code doubted}, an unauthenticated answer, is what the cache still holds
     * and it could not be used: without a key any host can announce an address, and one packet must not decide
     * the route for the whole TTL. A verified answer is returned as it is (asking again would learn nothing).
     */
    public Resolution reask(InetSocketAddress address, Resolution doubted) {
        if (doubted == null || !doubted.found() || doubted.verified()) {
            return doubted;
        }
        stats.reasked.increment();
        cache.invalidate(address, doubted);
        return resolve(address);
    }

    /** The cached answer for {@code address}, positive or negative, or {@code null}; asks nobody. */
    public Resolution cached(InetSocketAddress address) {
        return cache.lookup(address, System.nanoTime());
    }

    /** A connection to {@code address} failed: forget what was cached, so the next connect asks again. */
    public void invalidate(InetSocketAddress address) {
        stats.invalidations.increment();
        cache.invalidate(address);
    }

    /** The live cache entries, by address, for the doctor. */
    public Map<String, Resolution> cacheSnapshot() {
        return cache.snapshot(System.nanoTime());
    }

    public ResolverStats stats() {
        return stats;
    }

    public ResolverSettings settings() {
        return settings;
    }

    @Override
    public void close() {
        withdrawAll();
        for (ResolverBackend b : backends) {
            b.close();
        }
        if (broadcast != null) {
            broadcast.close();
        }
        synchronized (GLOBAL_LOCK) {
            if (global == this) {
                global = null;
                ResolverStatsMBean.tryUnregister();
            }
        }
    }
}
