package io.rdmanio.core.resolver;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * The resolver's counters, with stable names (the keys of {@link #snapshot()}), covering its failure modes:
 * malformed, oversized, unsigned, forged, stale and unmatched packets, answers held back by the per-source and the
 * global rate limits, unauthenticated answers asked again, and send errors.
 * Thread-safe.
 */
public final class ResolverStats {

    final LongAdder resolves = new LongAdder();
    final LongAdder cacheHits = new LongAdder();
    final LongAdder negativeHits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder queriesSent = new LongAdder();
    final LongAdder retriesSent = new LongAdder();
    final LongAdder answersAccepted = new LongAdder();
    final LongAdder answersUnmatched = new LongAdder();
    final LongAdder queriesReceived = new LongAdder();
    final LongAdder answersSent = new LongAdder();
    final LongAdder rateLimited = new LongAdder();
    final LongAdder rateLimitedGlobal = new LongAdder();
    final LongAdder announcesSent = new LongAdder();
    final LongAdder announcesReceived = new LongAdder();
    final LongAdder withdrawalsSent = new LongAdder();
    final LongAdder withdrawalsReceived = new LongAdder();
    final LongAdder replaced = new LongAdder();
    final LongAdder invalidations = new LongAdder();
    final LongAdder reasked = new LongAdder();
    final LongAdder malformed = new LongAdder();
    final LongAdder oversized = new LongAdder();
    final LongAdder unsigned = new LongAdder();
    final LongAdder forged = new LongAdder();
    final LongAdder stale = new LongAdder();
    final LongAdder replayed = new LongAdder();
    final LongAdder sendErrors = new LongAdder();

    /** All counters by name, in a fixed order. */
    public Map<String, Long> snapshot() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("resolves", resolves.sum());
        m.put("cacheHits", cacheHits.sum());
        m.put("negativeHits", negativeHits.sum());
        m.put("misses", misses.sum());
        m.put("queriesSent", queriesSent.sum());
        m.put("retriesSent", retriesSent.sum());
        m.put("answersAccepted", answersAccepted.sum());
        m.put("answersUnmatched", answersUnmatched.sum());
        m.put("queriesReceived", queriesReceived.sum());
        m.put("answersSent", answersSent.sum());
        m.put("rateLimited", rateLimited.sum());
        m.put("rateLimitedGlobal", rateLimitedGlobal.sum());
        m.put("announcesSent", announcesSent.sum());
        m.put("announcesReceived", announcesReceived.sum());
        m.put("withdrawalsSent", withdrawalsSent.sum());
        m.put("withdrawalsReceived", withdrawalsReceived.sum());
        m.put("replaced", replaced.sum());
        m.put("invalidations", invalidations.sum());
        m.put("reasked", reasked.sum());
        m.put("malformed", malformed.sum());
        m.put("oversized", oversized.sum());
        m.put("unsigned", unsigned.sum());
        m.put("forged", forged.sum());
        m.put("stale", stale.sum());
        m.put("replayed", replayed.sum());
        m.put("sendErrors", sendErrors.sum());
        return m;
    }

    /** Packets dropped for any reason of form or authenticity. */
    public long dropped() {
        return malformed.sum() + oversized.sum() + unsigned.sum() + forged.sum() + stale.sum() + replayed.sum()
            + answersUnmatched.sum();
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder();
        for (Map.Entry<String, Long> e : snapshot().entrySet()) {
            s.append(s.length() == 0 ? "" : " ").append(e.getKey()).append('=').append(e.getValue());
        }
        return s.toString();
    }
}
