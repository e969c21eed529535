package io.rdmanio.core.engine;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * A listening fabric endpoint. Connections whose handshake completed wait here to be accepted.
 *
 * <p>Thread-safe; {@link #close()} wakes waiters.
 */
public interface Listener extends AutoCloseable {

    /**
     * The next established connection, or {@code null} if none is waiting. Never blocks; with none waiting it
     * drives the engine's progress once and looks again, so that polling needs no selector.
     */
    Connection accept() throws IOException;

    /** {@link Readiness#ACCEPT} if a connection is waiting, else 0. */
    int readyOps();

    /** As {@link Connection#await}, for {@link Readiness#ACCEPT}. */
    int await(int ops, long timeoutNanos) throws IOException;

    void addReadinessListener(ReadinessListener listener);

    void removeReadinessListener(ReadinessListener listener);

    InetSocketAddress localAddress();

    Engine engine();

    /** Stops listening; connections not yet accepted are refused or closed. */
    @Override
    void close();
}
