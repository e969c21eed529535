package io.rdmanio.selector.config;

import java.util.concurrent.TimeUnit;

/**
 * {@code rdmanio.fallbackMillis}: how long a client under a {@code both} (or, until the resolver decides it,
 * {@code auto}) rule waits for the fabric's handshake before it connects over TCP instead. Default
 * {@value #DEFAULT_MILLIS} ms; {@code 0} means TCP right away whenever the fabric does not connect at once.
 * Thread-safe: the property is read on each use, so a test may change it between connects.
 */
public final class FallbackSetting {

    public static final String PROPERTY = "rdmanio.fallbackMillis";
    public static final long DEFAULT_MILLIS = 1000;
    /** An hour: beyond that a "fallback" would never happen in practice; a typo is more likely. */
    static final long MAX_MILLIS = TimeUnit.HOURS.toMillis(1);

    private FallbackSetting() {
    }

    /** The fallback time in nanoseconds, from the system property (checked at start by {@link ConfigLoader}). */
    public static long nanos() {
        return TimeUnit.MILLISECONDS.toNanos(parse(System.getProperty(PROPERTY)));
    }

    /**
     * @throws ConfigException naming the property and the value when it is not a whole number of milliseconds
     *         from 0 to an hour
     */
    static long parse(String value) {
        if (value == null || value.isBlank()) {
            return DEFAULT_MILLIS;
        }
        long millis;
        try {
            millis = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new ConfigException("-D" + PROPERTY + "=" + value + " is not a whole number of milliseconds");
        }
        if (millis < 0 || millis > MAX_MILLIS) {
            throw new ConfigException("-D" + PROPERTY + "=" + value + " is out of range: expected 0 to " + MAX_MILLIS
                    + " ms");
        }
        return millis;
    }
}
