package io.rdmanio.core.resolver;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The resolver's tunables, each with one name and one default:
 * <ul>
 *   <li>{@code rdmanio.resolver.port} (7471): the UDP port every responder listens on;</li>
 *   <li>{@code rdmanio.resolver.timeoutMillis} (200): the most one resolve that finds nothing waits, over all tries;</li>
 *   <li>{@code rdmanio.resolver.retries} (2): queries re-sent after the first, each wait twice the one before;</li>
 *   <li>{@code rdmanio.resolver.ttlSeconds} (60): how long an answer is trusted without asking again;</li>
 *   <li>{@code rdmanio.resolver.negativeTtlSeconds} (10): how long "nobody answered" is remembered;</li>
 *   <li>{@code rdmanio.resolver.key}: a shared key; when set every packet is signed and unsigned ones are dropped;</li>
 *   <li>{@code rdmanio.resolver.keyFile}: a file holding the key (its bytes, trailing newline ignored);</li>
 *   <li>{@code rdmanio.resolver.interfaces}: comma-separated interface names to broadcast on (default: the
 *       interface of the route to the queried address);</li>
 *   <li>{@code rdmanio.resolver.rateLimit} (200): answers per second to one source address, burst as large;</li>
 *   <li>{@code rdmanio.resolver.globalRateLimit} (1000): answers per second to all sources together, burst as
 *       large (the per-source limit alone is bypassed by a sender that cycles its source address);</li>
 *   <li>{@code rdmanio.resolver.file}: a static file (address to fabric) consulted before broadcasting;</li>
 *   <li>{@code rdmanio.resolver.broadcast} (true): whether to broadcast at all (false: static file only).</li>
 * </ul>
 * Immutable.
 */
public record ResolverSettings(int port, int timeoutMillis, int retries, int ttlSeconds, int negativeTtlSeconds,
                               byte[] key, List<String> interfaces, int rateLimit, Path file, boolean broadcast,
                               int globalRateLimit) {

    public static final String PREFIX = "rdmanio.resolver.";
    public static final String PORT = PREFIX + "port";
    public static final String TIMEOUT_MILLIS = PREFIX + "timeoutMillis";
    public static final String RETRIES = PREFIX + "retries";
    public static final String TTL_SECONDS = PREFIX + "ttlSeconds";
    public static final String NEGATIVE_TTL_SECONDS = PREFIX + "negativeTtlSeconds";
    public static final String KEY = PREFIX + "key";
    public static final String KEY_FILE = PREFIX + "keyFile";
    public static final String INTERFACES = PREFIX + "interfaces";
    public static final String RATE_LIMIT = PREFIX + "rateLimit";
    public static final String FILE = PREFIX + "file";
    public static final String BROADCAST = PREFIX + "broadcast";
    public static final String GLOBAL_RATE_LIMIT = PREFIX + "globalRateLimit";

    private static final int DEFAULT_GLOBAL_RATE_LIMIT = 1000;

    public static final ResolverSettings DEFAULT =
        new ResolverSettings(7471, 200, 2, 60, 10, null, List.of(), 200, null, true, DEFAULT_GLOBAL_RATE_LIMIT);

    public ResolverSettings {
        ensureRange(PORT, port, 1, 65535);
        ensureRange(TIMEOUT_MILLIS, timeoutMillis, 1, 60_000);
        ensureRange(RETRIES, retries, 0, 10);
        ensureRange(TTL_SECONDS, ttlSeconds, 1, 86_400);
        ensureRange(NEGATIVE_TTL_SECONDS, negativeTtlSeconds, 0, 86_400);
        ensureRange(RATE_LIMIT, rateLimit, 1, 1_000_000);
        ensureRange(GLOBAL_RATE_LIMIT, globalRateLimit, 1, 1_000_000);
        if (key != null && key.length < 16) {
            throw new IllegalArgumentException(KEY + " is " + key.length + " bytes; a key needs 16 at least");
        }
        key = key == null ? null : key.clone();
        interfaces = List.copyOf(interfaces);
    }

    /** Settings with the default global rate limit. */
    public ResolverSettings(int port, int timeoutMillis, int retries, int ttlSeconds, int negativeTtlSeconds,
                            byte[] key, List<String> interfaces, int rateLimit, Path file, boolean broadcast) {
        this(port, timeoutMillis, retries, ttlSeconds, negativeTtlSeconds, key, interfaces, rateLimit, file, broadcast,
            DEFAULT_GLOBAL_RATE_LIMIT);
    }

    /**
     * Reads the settings from {@code properties} (such as {@code System::getProperty}).
     *
     * @throws IllegalArgumentException naming the property, its value and what it should be
     */
    public static ResolverSettings load(Function<String, String> properties) {
        ResolverSettings d = DEFAULT;
        byte[] key = null;
        String keyText = properties.apply(KEY);
        String keyFile = properties.apply(KEY_FILE);
        if (keyText != null && !keyText.isEmpty()) {
            key = keyText.getBytes(StandardCharsets.UTF_8);
        } else if (keyFile != null && !keyFile.isBlank()) {
            try {
                String content = Files.readString(Path.of(keyFile.trim()), StandardCharsets.UTF_8);
                key = content.strip().getBytes(StandardCharsets.UTF_8);
            } catch (IOException | RuntimeException e) {
                throw new IllegalArgumentException(KEY_FILE + "=" + keyFile + ": cannot read the key: " + e, e);
            }
        }
        List<String> interfaces = new ArrayList<>();
        String names = properties.apply(INTERFACES);
        if (names != null) {
            for (String n : names.split(",")) {
                if (!n.isBlank()) {
                    interfaces.add(n.trim());
                }
            }
        }
        String file = properties.apply(FILE);
        String broadcast = properties.apply(BROADCAST);
        if (broadcast != null && !broadcast.equals("true") && !broadcast.equals("false")) {
            throw new IllegalArgumentException(BROADCAST + "=" + broadcast + ": expected true or false");
        }
        return new ResolverSettings(
            number(properties, PORT, d.port), number(properties, TIMEOUT_MILLIS, d.timeoutMillis),
            number(properties, RETRIES, d.retries), number(properties, TTL_SECONDS, d.ttlSeconds),
            number(properties, NEGATIVE_TTL_SECONDS, d.negativeTtlSeconds), key, interfaces,
            number(properties, RATE_LIMIT, d.rateLimit),
            file == null || file.isBlank() ? null : Path.of(file.trim()),
            broadcast == null || broadcast.equals("true"), number(properties, GLOBAL_RATE_LIMIT, d.globalRateLimit));
    }

    private static int number(Function<String, String> properties, String name, int dflt) {
        String v = properties.apply(name);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + "=" + v + " is not a whole number");
        }
    }

    private static void ensureRange(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + "=" + value + " is out of range: expected " + min + ".." + max);
        }
    }

    /** The key, or {@code null}; a copy. */
    @Override
    public byte[] key() {
        return key == null ? null : key.clone();
    }

    public boolean signed() {
        return key != null;
    }

    public ResolverSettings withPort(int p) {
        return new ResolverSettings(p, timeoutMillis, retries, ttlSeconds, negativeTtlSeconds, key, interfaces,
            rateLimit, file, broadcast, globalRateLimit);
    }

    public ResolverSettings withKey(byte[] k) {
        return new ResolverSettings(port, timeoutMillis, retries, ttlSeconds, negativeTtlSeconds, k, interfaces,
            rateLimit, file, broadcast, globalRateLimit);
    }

    public ResolverSettings withTiming(int timeout, int tries) {
        return new ResolverSettings(port, timeout, tries, ttlSeconds, negativeTtlSeconds, key, interfaces,
            rateLimit, file, broadcast, globalRateLimit);
    }

    public ResolverSettings withInterfaces(List<String> names) {
        return new ResolverSettings(port, timeoutMillis, retries, ttlSeconds, negativeTtlSeconds, key, names,
            rateLimit, file, broadcast, globalRateLimit);
    }

    public ResolverSettings withTtl(int ttl, int negativeTtl) {
        return new ResolverSettings(port, timeoutMillis, retries, ttl, negativeTtl, key, interfaces,
            rateLimit, file, broadcast, globalRateLimit);
    }

    public ResolverSettings withRateLimits(int perSource, int global) {
        return new ResolverSettings(port, timeoutMillis, retries, ttlSeconds, negativeTtlSeconds, key, interfaces,
            perSource, file, broadcast, global);
    }

    /** Waits between tries: the first is {@code timeout / (2^(retries+1) - 1)}, each next one twice as long. */
    long firstWaitNanos() {
        long parts = (1L << (retries + 1)) - 1;
        return Math.max(1, timeoutMillis * 1_000_000L / parts);
    }

    @Override
    public String toString() {
        return "port " + port + ", timeout " + timeoutMillis + " ms over " + (retries + 1) + " tries, ttl " + ttlSeconds
            + " s, negative ttl " + negativeTtlSeconds + " s, " + (key == null ? "unsigned" : "signed")
            + ", interfaces " + (interfaces.isEmpty() ? "by route" : String.join(",", interfaces)) + ", rate limit "
            + rateLimit + "/s a source, " + globalRateLimit + "/s in all" + (file == null ? "" : ", file " + file) + (broadcast ? "" : ", no broadcast");
    }
}
