package io.rdmanio.core.engine;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * One side of a fabric connection: a reliable, ordered byte stream with NIO's non-blocking contract.
 *
 * <p>Thread-safety: one reader and one writer may work at once (the selector module holds NIO's read and
 * write locks above this); {@link #close()} and {@link #abort()} may be called from any thread at any time and
 * wake every waiter. No method blocks except {@link #await}.
 *
 * <p>Progress never depends on a selector: {@link #read}, {@link #write} and {@link #finishConnect}, when they
 * would report nothing (or, for a write, not every byte), drive the engine's progress once and try again, so that
 * a program polling non-blocking channels sees bytes, credit and the handshake arrive. Bytes a write accepted
 * leave when credit returns even if the application then drives nothing (the engine's closer steps in when
 * nobody else has driven progress for about a millisecond).
 */
public interface Connection extends AutoCloseable {

    /**
     * Completes a pending connect.
     *
     * @return {@code true} when connected, {@code false} while the handshake is still under way
     * @throws java.net.ConnectException if the peer refused (no listener at that address) or the handshake
     *         failed; the message names the cause
     */
    boolean finishConnect() throws IOException;

    boolean isConnected();

    /**
     * Copies received bytes into {@code dsts[offset..offset+length)} in order.
     *
     * @return the bytes read; 0 if none are available; -1 once the peer's FIN has been read (or input shut down)
     * @throws IOException if the connection failed (reset by the peer, a protocol violation, a fabric error);
     *         the message names the cause, and the failure is sticky
     */
    long read(ByteBuffer[] dsts, int offset, int length) throws IOException;

    /**
     * Takes bytes from {@code srcs[offset..offset+length)} for sending; small writes are coalesced, large ones
     * split into frames. Never blocks.
     *
     * @return the bytes taken; 0 when there is no send credit or staging room (OP_WRITE becomes ready when there is)
     * @throws IOException after {@link #shutdownOutput()} or a failure
     */
    long write(ByteBuffer[] srcs, int offset, int length) throws IOException;

    /**
     * As {@link #write}, for a writer that is about to wait anyway (a blocking write with a slot or more left): the
     * bytes that find no send credit are not copied into staging, and 0 is returned instead, so that the caller
     * can wait a moment for credit and send them straight from its buffer, one copy fewer. A caller that has
     * waited long enough (the peer is not reading) calls {@link #write}, which stages them. Never blocks.
     */
    default long writeDirect(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return write(srcs, offset, length);
    }

    /**
     * A blocking write of the application begins ({@code true}) or returns ({@code false}). Bytes that a write still
     * under way has staged are not yet accepted in TCP's terms (the application cannot know how far the write got):
     * should this process die in it, the peer may read end of stream after the bytes that left, as after a TCP
     * writer killed in a blocking write, instead of the reset that staged bytes of a returned write call for.
     */
    default void blockingWrite(boolean underWay) {
    }

    /**
     * Whether every byte the writes took has left for the peer (none staged waiting for credit), or nothing more
     * can leave. A blocking write returns only then ({@link Readiness#POSTED} waits for it): TCP's kernel keeps
     * sending what a returned write accepted after its process has gone, and staging lives in this process.
     */
    default boolean allPosted() {
        return true;
    }

    /**
     * The bytes a read would return now without waiting, after driving progress once (as a TCP socket's
     * FIONREAD): 0 when none, at end of stream, after {@link #shutdownInput} or a failure.
     */
    default int available() throws IOException {
        return 0;
    }

    /**
     * The bytes this side holds written and not yet sent (its send staging), what {@code SO_SNDBUF} reads once the
     * connection is open when the application did not set it, as a connected TCP socket reads the size its kernel
     * grew the buffer to; 0 when not known.
     */
    default int sendBufferSize() {
        return 0;
    }

    /** Sends FIN after the bytes already written; later writes fail. Idempotent. */
    void shutdownOutput() throws IOException;

    /** Later reads return -1; bytes that arrive afterwards are discarded (their credit still returns). */
    void shutdownInput() throws IOException;

    /** The ready operations now: a subset of READ, WRITE and CONNECT, without driving progress. */
    int readyOps();

    /**
     * Waits until one of {@code ops} is ready, driving progress: polls, spins for the engine's budget, then
     * parks until a completion, {@link #close()} or the timeout.
     *
     * @param timeoutNanos at most this long; {@code Long.MAX_VALUE} for no limit
     * @return the ready subset of {@code ops}, or 0 on timeout, on interrupt (the interrupt status is kept)
     *         or when the connection was closed locally
     */
    int await(int ops, long timeoutNanos) throws IOException;

    void addReadinessListener(ReadinessListener listener);

    void removeReadinessListener(ReadinessListener listener);

    InetSocketAddress localAddress();

    InetSocketAddress remoteAddress();

    /** The engine this connection belongs to. */
    Engine engine();

    /**
     * Orderly close: FIN after pending bytes, then disconnect; frees every resource. Idempotent, never blocks. As
     * TCP's close, it is abortive instead (the peer reads "connection reset", bytes not yet sent are dropped) when
     * received bytes are still unread, and a close that finds more bytes arriving afterwards resets the peer.
     */
    @Override
    void close();

    /** Abortive close (SO_LINGER 0): disconnect at once; the peer reads "connection reset". */
    void abort();

    /**
     * Whether the socket's {@code SO_LINGER} is 0: then the close a normal JVM exit makes for this connection, if
     * the program left it open, is abortive, as the kernel resets such a socket when its process exits.
     */
    default void setLingerZero(boolean lingerZero) {
    }

    /**
     * Sends the one byte remaining in {@code src} as TCP's urgent data ({@code Socket.sendUrgentData}): after the
     * bytes written before it, as a frame of its own that the peer reads in its place when its socket inlines
     * urgent data ({@link #setOobInline}) and drops otherwise. Non-blocking as {@link #write}.
     *
     * @return 1 when the byte was taken, 0 when no send buffer was free (wait for {@link Readiness#WRITE})
     */
    default int writeUrgent(ByteBuffer src) throws IOException {
        throw new java.net.SocketException("Urgent data not supported by " + getClass().getSimpleName());
    }

    /** SO_OOBINLINE: whether an urgent byte from the peer is read in its place in the stream (else dropped). */
    default void setOobInline(boolean on) {
    }

    /**
     * After {@link #close()}: waits, driving progress, until the bytes written and the FIN have been delivered
     * (or the connection failed or is gone), as a close with {@code SO_LINGER} of a positive time waits.
     *
     * @param timeoutNanos at most this long
     * @return whether everything was delivered (or nothing is left to deliver) in time; false on timeout or
     *         interrupt (the interrupt status is kept)
     */
    default boolean awaitClosed(long timeoutNanos) {
        return true;
    }
}
