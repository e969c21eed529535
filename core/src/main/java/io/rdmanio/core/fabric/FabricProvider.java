package io.rdmanio.core.fabric;

import java.io.IOException;
import java.util.Map;

/**
 * A fabric implementation, found through {@link java.util.ServiceLoader}.
 *
 * <p>Availability is an API: {@link #unavailableReason()} names the cause and the fix when the fabric cannot
 * be opened on this machine (no device, no native library, no shared-memory directory).
 */
public interface FabricProvider {

    /** The name used by {@code rdmanio.fabric}: {@code loopback}, {@code shm} or {@code disni}. */
    String name();

    /** {@code null} when the fabric can be opened here, else a sentence naming the cause and the fix. */
    String unavailableReason();

    /**
     * {@code null} when the fabric can be opened here with {@code settings}, else a sentence naming the cause and
     * the fix. Fabrics whose availability depends on a setting (the shm directory) override this.
     */
    default String unavailableReason(Map<String, String> settings) {
        return unavailableReason();
    }

    /** Opens the fabric with the given settings (keys without the {@code rdmanio.} prefix). */
    Fabric open(Map<String, String> settings) throws IOException;
}
