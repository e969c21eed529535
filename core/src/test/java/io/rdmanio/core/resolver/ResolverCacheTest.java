package io.rdmanio.core.resolver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

class ResolverCacheTest {

    private static final InetSocketAddress A = new InetSocketAddress("10.231.0.2", 9000);
    private static final long S = 1_000_000_000L;
    private final ResolverStats stats = new ResolverStats();
    private final ResolverCache cache = new ResolverCache(ResolverSettings.DEFAULT.withTtl(60, 10), stats);

    private static Resolution found(long incarnation) {
        return new Resolution(A, Endpoints.disni(new InetSocketAddress("192.168.7.2", 9000)), incarnation, "test");
    }

    @Test
    void positiveEntriesLiveForTheTtl() {
        assertTrue(cache.putFound(found(1), 0));
        assertEquals(1, cache.lookup(A, 59 * S).incarnation());
        assertNull(cache.lookup(A, 60 * S));
    }

    @Test
    void negativeEntriesLiveForTheNegativeTtl() {
        cache.putNotFound(Resolution.none(A, "miss"), 0);
        assertFalse(cache.lookup(A, 9 * S).found());
        assertNull(cache.lookup(A, 10 * S));
    }

    @Test
    void aNewerIncarnationReplacesAnOlderOneButNeverTheReverse() {
        cache.putFound(found(5), 0);
        assertTrue(cache.putFound(found(9), S));
        assertEquals(1, stats.replaced.sum());
        assertFalse(cache.putFound(found(7), 2 * S));
        assertEquals(9, cache.lookup(A, 3 * S).incarnation());
    }

    @Test
    void anAnnouncementReplacesANegativeEntry() {
        cache.putNotFound(Resolution.none(A, "miss"), 0);
        assertTrue(cache.putFound(found(3), S));
        assertTrue(cache.lookup(A, 2 * S).found());
    }

    @Test
    void aMissDoesNotHideALiveListener() {
        cache.putFound(found(3), 0);
        cache.putNotFound(Resolution.none(A, "late miss"), S);
        assertTrue(cache.lookup(A, 2 * S).found());
    }

    @Test
    void withdrawalOfAnOlderIncarnationKeepsTheNewer() {
        cache.putFound(found(9), 0);
        assertFalse(cache.withdraw(A, 5, "old withdraw", S));
        assertTrue(cache.lookup(A, 2 * S).found());
        assertTrue(cache.withdraw(A, 9, "withdraw", 3 * S));
        assertFalse(cache.lookup(A, 4 * S).found());
    }

    @Test
    void invalidateForgetsEverything() {
        cache.putFound(found(1), 0);
        cache.invalidate(A);
        assertNull(cache.lookup(A, 1));
        cache.putNotFound(Resolution.none(A, "miss"), 0);
        cache.invalidate(A);
        assertNull(cache.lookup(A, 1));
    }
}
