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
 */
public record EngineConfig(int slotSize, int ringDepth, int controlSlots, int spinMicros) {

    public static final int DEFAULT_SLOT_SIZE = 16384;
    public static final int DEFAULT_RING_DEPTH = 32;
    public static final int DEFAULT_CONTROL_SLOTS = 2;
    public static final int DEFAULT_SPIN_MICROS = 50;

    public static final EngineConfig DEFAULT =
        new EngineConfig(DEFAULT_SLOT_SIZE, DEFAULT_RING_DEPTH, DEFAULT_CONTROL_SLOTS, DEFAULT_SPIN_MICROS);

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
            intProperty("rdmanio.spinMicros", DEFAULT_SPIN_MICROS));
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
        return new EngineConfig(v, ringDepth, controlSlots, spinMicros);
    }

    public EngineConfig withRingDepth(int v) {
        return new EngineConfig(slotSize, v, controlSlots, spinMicros);
    }

    public EngineConfig withControlSlots(int v) {
        return new EngineConfig(slotSize, ringDepth, v, spinMicros);
    }

    public EngineConfig withSpinMicros(int v) {
        return new EngineConfig(slotSize, ringDepth, controlSlots, v);
    }
}
