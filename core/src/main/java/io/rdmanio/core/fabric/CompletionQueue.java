package io.rdmanio.core.fabric;

import java.io.IOException;

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

    @Override
    void close();
}
