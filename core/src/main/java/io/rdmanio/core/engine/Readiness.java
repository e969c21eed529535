package io.rdmanio.core.engine;

/**
 * Readiness bits of connections and listeners. The values equal java.nio's SelectionKey operations on purpose,
 * so the selector module passes them through unchanged; this package does not depend on java.nio channels.
 */
public final class Readiness {
    /** Bytes (or end of stream, or an error to report) can be read. */
    public static final int READ = 1;
    /** A write would accept at least one byte (or report an error). */
    public static final int WRITE = 4;
    /** A pending connect has finished, successfully or not. */
    public static final int CONNECT = 8;
    /** A listener has a connection to accept (or an error to report). */
    public static final int ACCEPT = 16;
    /**
     * Every byte the connection's writes took has left for the peer, none staged waiting for credit (or nothing
     * more can leave: failed, closed). Not a selection operation: only {@link Connection#await} waits for it.
     */
    public static final int POSTED = 32;

    private Readiness() {
    }
}
