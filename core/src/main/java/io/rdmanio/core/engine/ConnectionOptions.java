package io.rdmanio.core.engine;

/**
 * Per-connection sizes, taken from the socket options in force when the connection is made.
 *
 * @param receiveBufferSize SO_RCVBUF: bytes of receive ring (rounded to whole slots, at least one data slot);
 *                          0 means the engine's default
 * @param sendBufferSize    SO_SNDBUF: bytes of send staging; 0 means the engine's default
 */
public record ConnectionOptions(int receiveBufferSize, int sendBufferSize) {

    public static final ConnectionOptions DEFAULT = new ConnectionOptions(0, 0);

    public ConnectionOptions {
        if (receiveBufferSize < 0 || sendBufferSize < 0) {
            throw new IllegalArgumentException("buffer sizes must not be negative: " + receiveBufferSize + ", " + sendBufferSize);
        }
    }
}
