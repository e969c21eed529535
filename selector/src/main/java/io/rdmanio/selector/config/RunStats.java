package io.rdmanio.selector.config;

import java.util.concurrent.atomic.LongAdder;

/**
 * Process-wide counters behind the {@code rdmanio.stats} summary: connections and bytes per transport, where
 * "rdma" counts every connection carried by a fabric (disni, shm or loopback). Thread-safe; counting costs one
 * striped add.
 */
public final class RunStats {

    private static final RunStats INSTANCE = new RunStats();

    private final LongAdder fabricConnections = new LongAdder();
    private final LongAdder tcpConnections = new LongAdder();
    private final LongAdder fabricBytes = new LongAdder();
    private final LongAdder tcpBytes = new LongAdder();

    public static RunStats get() {
        return INSTANCE;
    }

    /** A connection was established (connected or accepted) on a fabric or on TCP. */
    public void connectionOpened(boolean fabric) {
        (fabric ? fabricConnections : tcpConnections).increment();
        TransportStats.ensureRegistered();
    }

    /** Payload bytes moved (read or written) by a channel. */
    public void bytes(boolean fabric, long n) {
        if (n > 0) {
            (fabric ? fabricBytes : tcpBytes).add(n);
        }
    }

    public long fabricConnections() {
        return fabricConnections.sum();
    }

    public long tcpConnections() {
        return tcpConnections.sum();
    }

    public long fabricBytes() {
        return fabricBytes.sum();
    }

    public long tcpBytes() {
        return tcpBytes.sum();
    }
}
