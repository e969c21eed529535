package io.rdmanio.selector.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Every {@code rdmanio.*} system property rdmanio reads, so that a misspelled one is reported instead of quietly
 * ignored: {@code -Drdmanio.fabirc=loopback} would otherwise leave the program on the default fabric with no word
 * said. The names are those the tables of docs/ describe (a test keeps the two lists equal).
 *
 * <p>Stateless; thread-safe.
 */
final class KnownProperties {

    static final Set<String> NAMES = Set.of(
        // the provider and the engine
        "rdmanio.rules", "rdmanio.fabric", "rdmanio.stats", "rdmanio.fallbackMillis", "rdmanio.slotSize",
        "rdmanio.ringDepth", "rdmanio.controlSlots", "rdmanio.spinMicros", "rdmanio.loopback.seed",
        "rdmanio.lingerMillis", "rdmanio.lingerMaxBytes", "rdmanio.debug", "rdmanio.javaNet",
        "rdmanio.asyncChannels",
        // the disni fabric
        "rdmanio.disni.address", "rdmanio.disni.library", "rdmanio.disni.maxWr", "rdmanio.disni.maxInline",
        "rdmanio.disni.cqEntries", "rdmanio.disni.rnrRetry", "rdmanio.disni.retryCount",
        "rdmanio.disni.timeoutMillis", "rdmanio.disni.wakeupChannel",
        // the shm fabric
        "rdmanio.shm.dir", "rdmanio.shm.group", "rdmanio.shm.sealed", "rdmanio.shm.wakeupChannel",
        // the resolver
        "rdmanio.resolver.enabled", "rdmanio.resolver.port", "rdmanio.resolver.timeoutMillis",
        "rdmanio.resolver.retries", "rdmanio.resolver.ttlSeconds", "rdmanio.resolver.negativeTtlSeconds",
        "rdmanio.resolver.key", "rdmanio.resolver.keyFile", "rdmanio.resolver.interfaces",
        "rdmanio.resolver.rateLimit", "rdmanio.resolver.globalRateLimit", "rdmanio.resolver.file",
        "rdmanio.resolver.broadcast");

    /** Names the project's own build and tests pass to JVMs; not configuration, never reported. */
    private static final Set<String> BUILD = Set.of("rdmanio.root", "rdmanio.native.library", "rdmanio.fuzz.seed",
        "rdmanio.fuzz.rounds");

    private static final String PREFIX = "rdmanio.";

    private KnownProperties() {
    }

    /**
     * One line for each {@code rdmanio.*} name in {@code names} that rdmanio does not read, naming the closest
     * known property when one is near.
     */
    static List<String> warnings(Set<String> names) {
        List<String> lines = new ArrayList<>();
        for (String name : new TreeSet<>(names)) {
            if (!name.startsWith(PREFIX) || NAMES.contains(name) || BUILD.contains(name)) {
                continue;
            }
            String near = closest(name);
            lines.add("unknown property -D" + name + " is ignored"
                    + (near != null ? " (did you mean " + near + "?)" : " (see docs/configuration.md)"));
        }
        return lines;
    }

    /**
     * The known name within a few edits of {@code name}, else the longest known name that {@code name} starts with
     * (a word spelled out, as {@code rdmanio.shm.directory}), or {@code null}.
     */
    static String closest(String name) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        String prefix = null;
        for (String known : NAMES) {
            if (name.startsWith(known) && (prefix == null || known.length() > prefix.length())) {
                prefix = known;
            }
            int d = distance(name.toLowerCase(), known.toLowerCase());
            if (d < bestDistance || d == bestDistance && known.compareTo(best) < 0) {
                best = known;
                bestDistance = d;
            }
        }
        return bestDistance <= Math.max(2, name.length() / 5) ? best : prefix;
    }

    /** Edit distance (insertions, deletions, substitutions, and swaps of neighbours). */
    private static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                int v = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    v = Math.min(v, d[i - 2][j - 2] + 1);
                }
                d[i][j] = v;
            }
        }
        return d[a.length()][b.length()];
    }
}
