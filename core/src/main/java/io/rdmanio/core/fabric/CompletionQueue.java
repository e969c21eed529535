package io.rdmanio.core.fabric;

import java.io.IOException;
import java.nio.channels.SelectableChannel;

/**
 * A completion queue, shared by any number of queue pairs.
 *
 * <p>{@link #poll} and {@link #requestNotify} may be called from any thread, but callers serialize polling
 * (the engine polls under its progress lock). The notifier runs on whatever thread produced the completion
 * (or a fabric thread), must be quick and must not call back into the fabric.
 */
public interface CompletionQueue extends AutoCloseable {

    /**
     * Moves up to {@code out.capacity()} completions into {@code out}; never blocks, never allocates.
     *
     * @return the number of completions, also left in {@link Completions#count()}
     */
    int poll(Completions out) throws IOException;

    /**
     * Arms the queue: the next completion added after this call (or one already pending) runs
     * {@code notifier} once. Arming again before it fired replaces the notifier.
     */
    void requestNotify(Notifier notifier) throws IOException;

    /**
     * A channel of the JDK's default provider that a waiting thread may register for {@code OP_READ} in its own
     * JDK selector, so that a completion wakes that selector directly instead of through a fabric thread;
     * {@code null} when the fabric has none (the notifier is then the only wakeup).
     *
     * <p>The contract: while this queue is armed, a completion added to it makes the channel readable (or runs
     * the notifier, see {@link #requestNotify(Notifier, boolean)}). Readiness is level-triggered and belongs to the
     * fabric: {@link #poll} and {@link #requestNotify} consume it, so a thread woken by it must poll (or re-arm)
     * before it blocks again. Readiness may be spurious, and may be shared by every queue of the fabric. The caller
     * must never read, write, configure or close the channel; the fabric closes it when it closes. The same
     * channel may be registered in any number of selectors.
     */
    default SelectableChannel wakeupChannel() {
        return null;
    }

    /**
     * Arms the queue as {@link #requestNotify(Notifier)} does, for a caller that, while it waits, also watches
     * {@link #wakeupChannel()} in its own selector when {@code watched} is true. The fabric then need not run a
     * thread of its own to deliver this notification: the channel's readiness wakes the caller. The notifier still
     * runs (once) when a completion reaches this queue through someone else's poll, which may consume the
     * readiness before the caller's selector sees it; it may also run on the caller's own thread inside
     * {@link #poll}. Arming without {@code watched} while armed with it (or the reverse) keeps the stronger
     * promise until the notifier runs.
     */
    default void requestNotify(Notifier notifier, boolean watched) throws IOException {
        requestNotify(notifier);
    }

    /**
     * Every waiter that armed this queue without watching {@link #wakeupChannel()} has stopped waiting: the fabric
     * need no longer keep a thread of its own ready to deliver the notification. The queue stays armed (a caller
     * that watches the channel may still rely on it, and a completion still runs the notifier when a poll moves it
     * here); arming it again without {@code watched} restores the relay. No effect on a queue not armed, or on a
     * fabric that needs no thread to deliver notifications.
     */
    default void withdrawRelay() {
    }

    @Override
    void close();
}
