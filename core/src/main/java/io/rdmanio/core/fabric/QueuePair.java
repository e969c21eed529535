package io.rdmanio.core.fabric;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A reliable connected queue pair. Work requests are given as primitives so posting never allocates.
 *
 * <p>Data moves only by send and receive: a send lands in the oldest receive the peer posted. There is no RDMA
 * write or read: the engine's data path is sends into posted receive slots and nothing would call one, while every
 * fabric would have to implement it, keep it strict and test it. An RDMA-write data path would come back with
 * the engine code that uses it and a measured gain over sends.
 *
 * <p>Posting is thread-safe but the engine serializes it per connection. A post on a queue pair in the error
 * state, or beyond its queue depth, throws {@link FabricException}; failures after posting arrive as error
 * completions, after which every outstanding work request of the queue pair completes with
 * {@link Completions#WR_FLUSH_ERR}.
 */
public interface QueuePair {

    /** Request a completion for this send (selective signalling: unsignalled sends complete silently). */
    int SIGNALED = 1;
    /** Copy the payload at post time; the memory may be reused as soon as the post returns. */
    int INLINE = 2;

    /**
     * Queue-pair settings.
     *
     * @param sendCq        completion queue of sends
     * @param recvCq        completion queue of receives
     * @param maxSendWr     outstanding send work requests at most
     * @param maxRecvWr     posted receives at most
     * @param maxInlineData the largest inline payload
     */
    record Config(CompletionQueue sendCq, CompletionQueue recvCq, int maxSendWr, int maxRecvWr, int maxInlineData) {
    }

    /** A number unique among the fabric's live queue pairs, reported in every completion. */
    int qpNum();

    /** Posts a receive into {@code region} at {@code offset}, {@code length} bytes. */
    void postRecv(long wrId, MemoryRegion region, int offset, int length) throws IOException;

    /** Posts a send of {@code length} bytes from {@code region} at {@code offset}. */
    void postSend(long wrId, MemoryRegion region, int offset, int length, int flags) throws IOException;

    /**
     * Posts an inline send gathered from ordinary memory, as a device's inline send with two scatter-gather
     * elements: {@code headLength} bytes of {@code head} at {@code headOffset}, then {@code bodyLength} bytes of
     * {@code body} at {@code bodyOffset}. Both are copied before the call returns, so neither needs registering
     * and both may be reused at once; neither buffer's position or limit changes. The total must not exceed the
     * queue pair's {@code maxInlineData}; {@link #SIGNALED} is the only flag that applies.
     *
     * @throws FabricException as {@link #postSend}, and when this fabric's queue pairs have no inline send
     */
    default void postSendInline(long wrId, ByteBuffer head, int headOffset, int headLength, ByteBuffer body,
                                int bodyOffset, int bodyLength, int flags) throws IOException {
        throw new FabricException("inline sends from unregistered memory are not supported by " + this);
    }

    /**
     * For implementations of {@link #postSendInline}: fails unless {@code [offset, offset + length)} lies inside
     * {@code b}, naming the piece ({@code "head"} or {@code "body"}) and the queue pair.
     */
    static void ensureInlineSlice(QueuePair qp, String what, ByteBuffer b, int offset, int length)
            throws FabricException {
        if (b == null || offset < 0 || length < 0 || offset > b.capacity() - length) {
            throw new FabricException("inline send on " + qp + " refused: the " + what + " [" + offset + ", "
                + offset + " + " + length + ") is not inside " + b);
        }
    }

    /** Whether the queue pair is in the error state. */
    boolean isError();

    /**
     * Records where the peer could read it, should this process end without closing the connection (a halt, a
     * kill, a crash), how this side's stream stands: {@code consumed} is the count of payload bytes received and
     * taken by the application, given while nothing this side accepted for sending is still unsent and the
     * connection is open; {@code -1} withdraws it (bytes wait to be sent, or the connection is closing). A kernel
     * closes a dead process's TCP socket with a FIN in the first case and a reset when received bytes were left
     * unread; a fabric that can show this record to a surviving peer lets its engine tell the two apart. Others
     * ignore it (the default), and their survivors see a reset. Called often, from the data path: no allocation.
     */
    default void publishStanding(long consumed) {
    }

    /**
     * After this queue pair failed because the peer's process ended without closing the connection: what the peer
     * last gave {@link #publishStanding} ({@code >= 0}), else {@code -1} (not known, withdrawn, or the peer did not
     * end that way).
     */
    default long peerStanding() {
        return -1;
    }
}
