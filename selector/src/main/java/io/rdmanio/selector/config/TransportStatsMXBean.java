package io.rdmanio.selector.config;

import java.util.Map;

/**
 * What rdmanio carried in this process, as the JMX bean {@value TransportStats#OBJECT_NAME}. The same numbers go
 * to the {@code rdmanio.stats} file at exit. "Fabric" counts connections carried by any fabric (disni, shm or
 * loopback); the per-fabric maps split them by fabric name.
 */
public interface TransportStatsMXBean {

    /** The configured fabric ({@code rdmanio.fabric}): auto, disni, shm or loopback. */
    String getFabric();

    /** The rules file, or the empty string when there is none (everything on TCP). */
    String getRules();

    long getFabricConnections();

    long getTcpConnections();

    long getFabricBytes();

    long getTcpBytes();

    /** Connections opened per fabric engine used in this process. */
    Map<String, Long> getConnectionsByFabric();

    /**
     * A gauge: the connections each fabric engine used in this process holds now (open, or closed and still
     * delivering what was written).
     */
    Map<String, Long> getOpenConnectionsByFabric();

    /** A gauge: the sum of {@link #getOpenConnectionsByFabric()}. */
    long getOpenFabricConnections();

    /** Payload bytes sent and received per fabric engine used in this process. */
    Map<String, Long> getBytesByFabric();

    /** Sockets routed per rule ({@code FILE:LINE: RULE}, or {@code (no rule)}). */
    Map<String, Long> getRoutedByRule();

    /** Clients meant for a fabric that connected over TCP instead. */
    long getFallbacks();

    Map<String, Long> getFallbackReasons();

    /**
     * Native transports loaded in this process whose sockets bypass rdmanio (kind to the class that showed it), as
     * {@link BypassedTransports} found them.
     */
    Map<String, String> getBypassedTransports();

    /**
     * Which JDK socket APIs follow the rules ({@code nio}, {@code javaNet}, {@code asyncChannels}) and, for those
     * that do not, why: the same states as the stats file's {@code routedApis}.
     */
    Map<String, String> getRoutedApis();

    /**
     * The connection table: one row per fabric connection of every engine used in this process (open, or closed
     * and still delivering), oldest first per engine.
     */
    ConnectionRow[] getConnections();

    /** Times a sender found no credit and had to wait, over all fabric engines. */
    long getCreditStalls();

    /** Sends that arrived where no receive was posted, over all fabric engines: always zero unless a bug. */
    long getReceiverNotReady();
}
