package io.rdmanio.core.fabric;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * A connection-manager id (rdma_cm_id): a listening endpoint or one side of a reliable connection.
 *
 * <p>Life of an active side: {@link #createQueuePair}, post receives, {@link #connect}, then
 * {@link CmEvent.Type#ESTABLISHED} or {@link CmEvent.Type#REJECTED}/{@link CmEvent.Type#UNREACHABLE}.
 * Passive side: {@link #bind}, {@link #listen}; each {@link CmEvent.Type#CONNECT_REQUEST} carries a new id on which
 * the server creates a queue pair, posts receives and calls {@link #accept} or {@link #reject}.
 *
 * <p>Private data is at most {@link #MAX_PRIVATE_DATA} bytes (the limit of an RDMA CM connect request).
 */
public interface CmId extends AutoCloseable {

    int MAX_PRIVATE_DATA = 56;

    /**
     * Binds to a local address; port 0 picks a free port.
     *
     * @throws java.net.BindException if the address is in use
     */
    void bind(InetSocketAddress local) throws IOException;

    void listen(int backlog) throws IOException;

    /**
     * Active side, on a fresh id (before {@link #createQueuePair}): {@link #connect} will connect from
     * {@code source}, which becomes this id's local address and the address the peer sees (rdma_cm: the id is bound
     * to it). The caller owns the port: a kernel socket of this process stays bound to it while the connection
     * lives, so no other socket of the host takes it. A wildcard address means the fabric's own address. Without
     * it, an active id connects from a port of the fabric's choosing.
     *
     * @throws java.net.BindException if the fabric cannot use the address (not one of its device, port taken)
     */
    void connectFrom(InetSocketAddress source) throws IOException;

    /** Starts connecting; the outcome arrives as an event on this id's channel. */
    void connect(InetSocketAddress remote, ByteBuffer privateData) throws IOException;

    /** Accepts a connect request; the queue pair must exist. */
    void accept(ByteBuffer privateData) throws IOException;

    void reject(ByteBuffer privateData) throws IOException;

    /** Creates this id's queue pair. */
    QueuePair createQueuePair(QueuePair.Config config) throws IOException;

    /** The queue pair, or {@code null} before {@link #createQueuePair}. */
    QueuePair queuePair();

    /** Starts an orderly disconnect; both sides get {@link CmEvent.Type#DISCONNECTED} and pending work is flushed. */
    void disconnect() throws IOException;

    InetSocketAddress localAddress();

    /** The peer's address, or {@code null} if not connected. */
    InetSocketAddress remoteAddress();

    /** Destroys the id and its queue pair (after a disconnect, if one is needed). */
    @Override
    void close();
}
