package io.rdmanio.core.engine;

import java.net.InetSocketAddress;

/**
 * Per-connection settings, taken from the socket options and the bind in force when the connection is made.
 *
 * @param receiveBufferSize SO_RCVBUF: bytes of receive ring (rounded to whole slots, at least one data slot);
 *                          0 means the engine's default
 * @param sendBufferSize    SO_SNDBUF: bytes of send staging; 0 means the engine's default
 * @param source            where an active connection connects from: the address a socket bound before it
 *                          connected holds (a kernel socket of this process keeps the port while the connection
 *                          lives); null means a port of the fabric's choosing
 */
public record ConnectionOptions(int receiveBufferSize, int sendBufferSize, InetSocketAddress source) {

    public static final ConnectionOptions DEFAULT = new ConnectionOptions(0, 0);

    public ConnectionOptions {
        if (receiveBufferSize < 0 || sendBufferSize < 0) {
            throw new IllegalArgumentException("buffer sizes must not be negative: " + receiveBufferSize + ", " + sendBufferSize);
        }
    }

    public ConnectionOptions(int receiveBufferSize, int sendBufferSize) {
        this(receiveBufferSize, sendBufferSize, null);
    }
}
