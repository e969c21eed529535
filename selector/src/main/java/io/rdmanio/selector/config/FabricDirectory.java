package io.rdmanio.selector.config;

import io.rdmanio.core.engine.Engine;
import java.io.IOException;

/**
 * Where the fabric choice finds fabrics and their engines: the fabrics present in this build and whether each can
 * be opened here, and the shared engine of an opened fabric. A seam, so the choice can be tested without devices.
 */
interface FabricDirectory {

    /**
     * {@code null} when the named fabric can be opened on this machine, else a sentence naming the cause (and the
     * fix, when there is one). A fabric that is not in this build is unavailable, with that reason.
     */
    String unavailableReason(String fabricName);

    /**
     * As {@link #unavailableReason}, asking only what is safe before any native library loads (the fabric's
     * {@code quickUnavailableReason}).
     */
    default String quickUnavailableReason(String fabricName) {
        return unavailableReason(fabricName);
    }

    /** The engine shared by every connection on the named fabric, opened on first use. */
    Engine engine(String fabricName) throws IOException;
}
