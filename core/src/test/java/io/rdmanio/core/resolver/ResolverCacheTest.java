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

    private static final Endpoints REAL = Endpoints.disni(new InetSocketAddress("192.168.7.2", 9000));
    private static final Endpoints FORGED = Endpoints.disni(new InetSocketAddress("10.66.6.6", 666));

    private static Resolution found(long incarnation) {
        return new Resolution(A, REAL, incarnation, "test");
    }

    private static Resolution unsigned(Endpoints e, long incarnation, Resolution.Origin origin) {
        return new Resolution(A, e, incarnation, "unsigned test", origin);
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
        assertFalse(cache.withdraw(A, 5, true, "old withdraw", S));
        assertTrue(cache.lookup(A, 2 * S).found());
        assertTrue(cache.withdraw(A, 9, true, "withdraw", 3 * S));
        assertFalse(cache.lookup(A, 4 * S).found());
    }

    @Test
    void oneUnsignedAnnouncementWithTheHighestIncarnationDoesNotPinTheEntry() {
        assertTrue(cache.putFound(unsigned(REAL, 5, Resolution.Origin.ANSWER), 0));
        assertTrue(cache.putFound(unsigned(FORGED, -1L, Resolution.Origin.ANNOUNCEMENT), S));
        assertEquals(FORGED, cache.lookup(A, 2 * S).endpoints());
        // The real listener's next answer (or announcement) replaces it, whatever the incarnations say.
        assertTrue(cache.putFound(unsigned(REAL, 5, Resolution.Origin.ANSWER), 3 * S));
        assertEquals(REAL, cache.lookup(A, 4 * S).endpoints());
    }

    @Test
    void anUnsignedPacketNeverReplacesAVerifiedEntry() {
        cache.putFound(found(5), 0);
        assertFalse(cache.putFound(unsigned(FORGED, -1L, Resolution.Origin.ANNOUNCEMENT), S));
        assertFalse(cache.withdraw(A, -1L, false, "forged withdrawal", 2 * S));
        assertEquals(REAL, cache.lookup(A, 3 * S).endpoints());
    }

    @Test
    void anUnsignedWithdrawalForgetsInsteadOfPinningAMiss() {
        cache.putFound(unsigned(REAL, 5, Resolution.Origin.ANNOUNCEMENT), 0);
        assertTrue(cache.withdraw(A, 5, false, "unsigned withdrawal", S));
        assertNull(cache.lookup(A, 2 * S), "no negative entry: the next connect asks again");
    }

    @Test
    void invalidatingADoubtedEntryKeepsANewerOne() {
        Resolution forged = unsigned(FORGED, -1L, Resolution.Origin.ANNOUNCEMENT);
        cache.putFound(forged, 0);
        cache.putFound(unsigned(REAL, 5, Resolution.Origin.ANSWER), S);
        assertFalse(cache.invalidate(A, forged), "the doubted entry was already replaced");
        assertEquals(REAL, cache.lookup(A, 2 * S).endpoints());
        assertTrue(cache.invalidate(A, cache.lookup(A, 2 * S)));
        assertNull(cache.lookup(A, 3 * S));
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
