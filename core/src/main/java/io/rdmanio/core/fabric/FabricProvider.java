package io.rdmanio.core.fabric;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
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

    /**
     * The part of {@link #unavailableReason(Map)} that is safe to ask before any native library loads (disni: is
     * there a device, may memory be locked), for a configuration check at start-up; the default is the full check.
     */
    default String quickUnavailableReason(Map<String, String> settings) {
        return unavailableReason(settings);
    }

    /**
     * The address a client uses to reach a listener of this fabric bound to {@code bound}: that address, or for
     * the wildcard the one this fabric serves (disni: its RDMA device's), or the wildcard when it has none.
     */
    default InetAddress reachableAddress(InetAddress bound) {
        return bound;
    }

    /**
     * {@code doctor}'s lines for this fabric on this machine, each with its fix where one is needed, printed under
     * {@link #name()}'s own heading; returns the number of problems found. The default has nothing to say.
     */
    default int report(PrintStream out) {
        return 0;
    }

    /** Opens the fabric with the given settings (keys without the {@code rdmanio.} prefix). */
    Fabric open(Map<String, String> settings) throws IOException;
}
