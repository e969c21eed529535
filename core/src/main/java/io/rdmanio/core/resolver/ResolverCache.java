package io.rdmanio.core.resolver;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Answers remembered for a while: positive entries (a listener's endpoints and incarnation) for {@code ttl}, negative
 * ones ("nobody answered") for {@code negativeTtl}. An announcement clears a negative entry, so a listener that
 * starts after a miss is found at once.
 *
 * <p>What may replace a positive entry depends on who vouches for it ({@link Resolution.Origin}):
 * <ul>
 *   <li>a verified entry (signed, static file, directory backend) is replaced by a verified one with an equal or
 *       larger (unsigned) incarnation, never by a smaller one, so a late answer or a replayed announcement cannot
 *       bring a restarted listener's old endpoints back; an unauthenticated packet never replaces it;</li>
 *   <li>an unauthenticated entry (unsigned answer or announcement) is replaced by the next answer or announcement
 *       whatever its incarnation: an incarnation that anyone can write orders nothing, and honouring it would let
 *       one forged packet with the highest incarnation pin a wrong endpoint for the whole TTL (the real listener's
 *       answers could no longer replace it).</li>
 * </ul>
 * Withdrawals follow the same trust: an unauthenticated withdrawal only drops the entry (the next connect asks
 * again) instead of recording a miss that one forged packet could pin for {@code negativeTtl}.
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
     * Stores a found listener unless a live verified entry is there that {@code r} may not replace: {@code r} is
     * unauthenticated, or its incarnation is smaller.
     *
     * @return whether it was stored
     */
    boolean putFound(Resolution r, long now) {
        boolean[] stored = new boolean[1];
        entries.compute(r.address(), (a, old) -> {
            boolean live = old != null && now - old.expiresAtNanos < 0;
            if (live && old.resolution.found() && old.resolution.verified() && (!r.verified()
                    || Long.compareUnsigned(old.resolution.incarnation(), r.incarnation()) > 0)) {
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
     * A listener closed: drops its entry unless a newer incarnation is cached (or a verified entry and the withdrawal
     * is not), and, when the withdrawal is {@code verified}, remembers the miss.
     *
     * @return whether an entry was dropped
     */
    boolean withdraw(InetSocketAddress address, long incarnation, boolean verified, String source, long now) {
        boolean[] dropped = new boolean[1];
        entries.compute(address, (a, old) -> {
            if (old != null && old.resolution.found()
                    && (Long.compareUnsigned(old.resolution.incarnation(), incarnation) > 0
                        || old.resolution.verified() && !verified)) {
                return old;
            }
            dropped[0] = old != null && old.resolution.found();
            if (!verified) {
                // Unauthenticated: forget, so the next connect asks; a negative entry would be pinned by one packet.
                return old != null && !old.resolution.found() ? old : null;
            }
            return negativeTtlNanos == 0 ? null
                : new Entry(Resolution.none(address, source), now + negativeTtlNanos);
        });
        return dropped[0];
    }

    /**
     * Forgets {@code address} if its entry is still {@code doubted} (the same endpoints and incarnation).
     *
     * @return whether it was dropped
     */
    boolean invalidate(InetSocketAddress address, Resolution doubted) {
        boolean[] dropped = new boolean[1];
        entries.computeIfPresent(address, (a, old) -> {
            Resolution r = old.resolution;
            if (r.found() && r.incarnation() == doubted.incarnation()
                    && java.util.Objects.equals(r.endpoints(), doubted.endpoints())) {
                dropped[0] = true;
                return null;
            }
            return old;
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
