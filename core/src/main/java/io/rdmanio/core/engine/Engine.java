package io.rdmanio.core.engine;

import io.rdmanio.core.fabric.Notifier;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SelectableChannel;
import java.util.List;

/**
 * The connection engine over one fabric: its registered buffer pool, completion queue and event channel.
 *
 * <p>Thread-safe. {@link #progress()} may be called by any thread; concurrent callers do not block each other
 * (one polls, the others return).
 */
public interface Engine extends AutoCloseable {

    /** The fabric's name: {@code loopback}, {@code shm} or {@code disni}. */
    String fabricName();

    /**
     * Listens on {@code local} (port 0 picks one).
     *
     * @throws java.net.BindException if the address is in use on this fabric
     */
    Listener listen(InetSocketAddress local, int backlog, ConnectionOptions options) throws IOException;

    /**
     * Starts connecting to {@code remote}; {@link Connection#finishConnect()} reports the outcome.
     * Never blocks.
     */
    Connection connect(InetSocketAddress remote, ConnectionOptions options) throws IOException;

    /**
     * Polls completions and connection-manager events, updates readiness, reposts receives and sends credit.
     * Never blocks, never allocates in steady state.
     *
     * @return how much work was done (0 when there was nothing to do)
     */
    int progress();

    /**
     * Arms the fabric's notification: {@code notifier} runs once when there is new work for {@link #progress()}.
     * The notifier must remember its signal (a flag, or a selector's wakeup): it may run while the waiting thread
     * is still arming, and arming can take locks that consume a bare {@code LockSupport.unpark}.
     *
     * @return {@code false} if work is already pending (call {@link #progress()} instead of blocking)
     */
    boolean arm(Notifier notifier);

    /**
     * The JDK channels (of the JDK's default provider) a blocked select may watch instead of relying on a fabric
     * thread to run its notifier: each becomes readable when a completion arrives while the engine is armed. Empty
     * when the fabric has none (loopback, shm) or the engine is closed. The list is immutable; it is replaced (a
     * new list) when the engine's channels change, so a caller can compare it by reference. A caller registers them
     * for {@code OP_READ} in its own JDK selector, never reads, configures or closes them, and after a wakeup calls
     * {@link #progress()} (which consumes the readiness) before it blocks again.
     */
    default List<SelectableChannel> wakeupChannels() {
        return List.of();
    }

    /**
     * {@link #arm(Notifier)} for a caller that watches the channels in {@code watched} (a list it had from
     * {@link #wakeupChannels()}) while it blocks: queues whose channel is among them are armed without a fabric
     * thread relaying their completions, the rest as {@link #arm(Notifier)} arms them. The notifier may still run
     * (a completion taken by another thread's progress consumes the readiness), so it must be as in
     * {@link #arm(Notifier)}.
     *
     * @return {@code false} if work is already pending (call {@link #progress()} instead of blocking)
     */
    default boolean arm(Notifier notifier, List<SelectableChannel> watched) {
        return arm(notifier);
    }

    /** How long a blocking wait spins, calling {@link #progress()}, before it arms and blocks. */
    long spinNanos();

    /** Counters since the engine opened. */
    EngineStats stats();

    /**
     * A gauge: the engine's connections now, from the start of their setup until their teardown (open, or closed
     * and still delivering); -1 when the engine does not count them.
     */
    default int openConnections() {
        return -1;
    }

    /**
     * A snapshot of the engine's connections, open or closed and still delivering, one row each, oldest first; empty
     * when the engine does not list them. Takes each connection's lock in turn, never two at once.
     */
    default List<ConnectionInfo> connectionTable() {
        return List.of();
    }

    @Override
    void close();
}
