package io.rdmanio.core.resolver;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Answers remembered for a while: positive entries (a listener's endpoints and incarnation) for {@code ttl}, negative
 * ones ("nobody answered") for {@code negativeTtl}. An entry with a larger (unsigned) incarnation replaces one with
 * a smaller; a smaller one never replaces a larger, so a late answer or a replayed announcement cannot bring a
 * restarted listener's old endpoints back. An announcement clears a negative entry, so a listener that starts
 * after a miss is found at once.
 *
 * <p>Thread-safe: each update is one atomic {@code compute} on the address's entry.
 */
final class ResolverCache {

    private record Entry(Resolution resolution, long expiresAtNanos) {
    }

    private final ConcurrentHashMap<InetSocketAddress, Entry> entries = new ConcurrentHashMap<>();
    private final long ttlNanos;
    private final long negativeTtlNanos;
    private final ResolverStats stats;

    ResolverCache(ResolverSettings settings, ResolverStats stats) {
        this.ttlNanos = settings.ttlSeconds() * 1_000_000_000L;
        this.negativeTtlNanos = settings.negativeTtlSeconds() * 1_000_000_000L;
        this.stats = stats;
    }

    /** The live entry for {@code address} (positive or negative), or {@code null}. */
    Resolution lookup(InetSocketAddress address, long now) {
        Entry e = entries.get(address);
        if (e == null) {
            return null;
        }
        if (now - e.expiresAtNanos >= 0) {
            entries.remove(address, e);
            return null;
        }
        return e.resolution;
    }

    /**
     * Stores a found listener unless a live entry with a larger incarnation is there.
     *
     * @return whether it was stored
     */
    boolean putFound(Resolution r, long now) {
        boolean[] stored = new boolean[1];
        entries.compute(r.address(), (a, old) -> {
            boolean live = old != null && now - old.expiresAtNanos < 0;
            if (live && old.resolution.found()
                    && Long.compareUnsigned(old.resolution.incarnation(), r.incarnation()) > 0) {
                return old;
            }
            if (live && old.resolution.found() && old.resolution.incarnation() != r.incarnation()) {
                stats.replaced.increment();
            }
            stored[0] = true;
            return new Entry(r, now + ttlNanos);
        });
        return stored[0];
    }

    /** Remembers that nobody serves {@code address}, unless a live positive entry arrived meanwhile. */
    void putNotFound(Resolution r, long now) {
        if (negativeTtlNanos == 0) {
            return;
        }
        entries.compute(r.address(), (a, old) -> {
            if (old != null && now - old.expiresAtNanos < 0 && old.resolution.found()) {
                return old;
            }
            return new Entry(r, now + negativeTtlNanos);
        });
    }

    /**
     * A listener closed: drops its entry unless a newer incarnation is cached, and remembers the miss.
     *
     * @return whether an entry was dropped
     */
    boolean withdraw(InetSocketAddress address, long incarnation, String source, long now) {
        boolean[] dropped = new boolean[1];
        entries.compute(address, (a, old) -> {
            if (old != null && old.resolution.found()
                    && Long.compareUnsigned(old.resolution.incarnation(), incarnation) > 0) {
                return old;
            }
            dropped[0] = old != null && old.resolution.found();
            return negativeTtlNanos == 0 ? null
                : new Entry(Resolution.none(address, source), now + negativeTtlNanos);
        });
        return dropped[0];
    }

    /** Forgets {@code address}, positive or negative: the next resolve asks the network. */
    void invalidate(InetSocketAddress address) {
        entries.remove(address);
    }

    /** The live entries, by address, for the doctor. */
    Map<String, Resolution> snapshot(long now) {
        Map<String, Resolution> m = new TreeMap<>();
        for (Map.Entry<InetSocketAddress, Entry> e : entries.entrySet()) {
            if (now - e.getValue().expiresAtNanos < 0) {
                m.put(e.getKey().toString(), e.getValue().resolution);
            }
        }
        return m;
    }
}
