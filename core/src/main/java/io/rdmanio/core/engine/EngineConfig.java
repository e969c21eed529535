package io.rdmanio.core.engine;

import io.rdmanio.core.protocol.FrameDescriptor;
import io.rdmanio.core.protocol.HandshakeDescriptor;

/**
 * An engine's tunables. Each has one system property, one default and one line here.
 *
 * @param slotSize     {@code rdmanio.slotSize}: bytes per ring slot and largest frame (a power of two, at least
 *                     256; default 16384, or the fabric's {@link io.rdmanio.core.fabric.Fabric#preferredSlotSize()}:
 *                     65536 on shm)
 * @param ringDepth    {@code rdmanio.ringDepth}: data slots per connection and direction when SO_RCVBUF/SO_SNDBUF
 *                     are not set (default 32)
 * @param controlSlots {@code rdmanio.controlSlots}: receive slots for control frames per connection (default 2,
 *                     at least 2)
 * @param spinMicros   {@code rdmanio.spinMicros}: how long a blocking wait polls before it parks (default 50)
 * @param lingerMillis {@code rdmanio.lingerMillis}: how long a closed connection may go without delivering any of
 *                     its remaining bytes (and its FIN) before it is reset and freed; the JVM's exit waits for open
 *                     and closed connections within the same bound (default 30000, at least 0)
 * @param lingerMaxBytes {@code rdmanio.lingerMaxBytes}: registered memory that closed, still delivering
 *                     connections may hold together; beyond it the connection lingering longest is reset, as the
 *                     kernel resets orphaned sockets beyond its limit (default 268435456, 256 MiB)
 */
public record EngineConfig(int slotSize, int ringDepth, int controlSlots, int spinMicros, long lingerMillis,
                           long lingerMaxBytes) {

    public static final int DEFAULT_SLOT_SIZE = 16384;
    public static final int DEFAULT_RING_DEPTH = 32;
    public static final int DEFAULT_CONTROL_SLOTS = 2;
    public static final int DEFAULT_SPIN_MICROS = 50;
    public static final long DEFAULT_LINGER_MILLIS = 30_000;
    public static final long DEFAULT_LINGER_MAX_BYTES = 256L << 20;

    public static final EngineConfig DEFAULT = new EngineConfig(DEFAULT_SLOT_SIZE, DEFAULT_RING_DEPTH,
        DEFAULT_CONTROL_SLOTS, DEFAULT_SPIN_MICROS, DEFAULT_LINGER_MILLIS, DEFAULT_LINGER_MAX_BYTES);

    public EngineConfig {
        FrameDescriptor.ensureSlotSize(slotSize);
        if (ringDepth < 1 || ringDepth > HandshakeDescriptor.MAX_SLOTS) {
            throw new IllegalArgumentException("rdmanio.ringDepth must be between 1 and "
                + HandshakeDescriptor.MAX_SLOTS + ": " + ringDepth);
        }
        if (controlSlots < HandshakeDescriptor.MIN_CONTROL_SLOTS || controlSlots > HandshakeDescriptor.MAX_SLOTS) {
            throw new IllegalArgumentException("rdmanio.controlSlots must be between "
                + HandshakeDescriptor.MIN_CONTROL_SLOTS + " and " + HandshakeDescriptor.MAX_SLOTS + ": "
                + controlSlots);
        }
        if (spinMicros < 0) {
            throw new IllegalArgumentException("rdmanio.spinMicros must not be negative: " + spinMicros);
        }
        if (lingerMillis < 0) {
            throw new IllegalArgumentException("rdmanio.lingerMillis must not be negative: " + lingerMillis);
        }
        if (lingerMaxBytes < 0) {
            throw new IllegalArgumentException("rdmanio.lingerMaxBytes must not be negative: " + lingerMaxBytes);
        }
    }

    /** Reads the {@code rdmanio.*} system properties, using the default of each one not set. */
    public static EngineConfig fromSystemProperties() {
        return fromSystemProperties(DEFAULT_SLOT_SIZE);
    }

    /** As {@link #fromSystemProperties()}, with {@code defaultSlotSize} when {@code rdmanio.slotSize} is not set. */
    public static EngineConfig fromSystemProperties(int defaultSlotSize) {
        return new EngineConfig(
            intProperty("rdmanio.slotSize", defaultSlotSize),
            intProperty("rdmanio.ringDepth", DEFAULT_RING_DEPTH),
            intProperty("rdmanio.controlSlots", DEFAULT_CONTROL_SLOTS),
            intProperty("rdmanio.spinMicros", DEFAULT_SPIN_MICROS),
            longProperty("rdmanio.lingerMillis", DEFAULT_LINGER_MILLIS),
            longProperty("rdmanio.lingerMaxBytes", DEFAULT_LINGER_MAX_BYTES));
    }

    private static long longProperty(String name, long defaultValue) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            return defaultValue;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer: '" + v + "'", e);
        }
    }

    private static int intProperty(String name, int defaultValue) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            return defaultValue;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer: '" + v + "'", e);
        }
    }

    public EngineConfig withSlotSize(int v) {
        return new EngineConfig(v, ringDepth, controlSlots, spinMicros, lingerMillis, lingerMaxBytes);
    }

    public EngineConfig withRingDepth(int v) {
        return new EngineConfig(slotSize, v, controlSlots, spinMicros, lingerMillis, lingerMaxBytes);
    }

    public EngineConfig withControlSlots(int v) {
        return new EngineConfig(slotSize, ringDepth, v, spinMicros, lingerMillis, lingerMaxBytes);
    }

    public EngineConfig withSpinMicros(int v) {
        return new EngineConfig(slotSize, ringDepth, controlSlots, v, lingerMillis, lingerMaxBytes);
    }

    public EngineConfig withLingerMillis(long v) {
        return new EngineConfig(slotSize, ringDepth, controlSlots, spinMicros, v, lingerMaxBytes);
    }

    public EngineConfig withLingerMaxBytes(long v) {
        return new EngineConfig(slotSize, ringDepth, controlSlots, spinMicros, lingerMillis, v);
    }
}
