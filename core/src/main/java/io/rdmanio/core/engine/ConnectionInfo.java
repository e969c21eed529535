package io.rdmanio.core.engine;

import java.net.InetSocketAddress;

/**
 * One row of an engine's connection table ({@link Engine#connectionTable()}): a snapshot of one connection, taken
 * under its lock, for operators (JMX, {@code ./rdmanio stats PID}).
 *
 * @param fabric        the fabric carrying it
 * @param local         the local address (as the fabric names it; {@code null} before it is known)
 * @param remote        the peer's address
 * @param client        whether this end connected (false: accepted)
 * @param state         {@code connecting}, {@code handshake}, {@code open} or {@code closed}, with what is shut
 *                      down, closed or failed after it ({@code open, output shut down}; {@code closed, delivering})
 * @param bytesWritten  bytes the application wrote
 * @param bytesRead     bytes the application read
 * @param sendCredit    data frames the peer's receive ring has room for now
 * @param stagedFrames  frames written and not yet sent (waiting for credit)
 * @param ageMillis     milliseconds since the connection was created
 */
public record ConnectionInfo(String fabric, InetSocketAddress local, InetSocketAddress remote, boolean client,
        String state, long bytesWritten, long bytesRead, long sendCredit, long stagedFrames, long ageMillis) {
}
