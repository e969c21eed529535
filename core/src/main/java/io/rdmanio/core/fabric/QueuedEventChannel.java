package io.rdmanio.core.fabric;

import java.util.ArrayDeque;
import java.util.Objects;

/**
 * The event channel of a software fabric (loopback, shm): a FIFO of connection-manager events with a one-shot
 * notifier. The fabric queues events with {@link #enqueue} and runs the notifier it returns once it holds no lock
 * of its own.
 *
 * <p>Thread-safe. Its lock (the object's monitor) is a leaf: nothing is locked or called while holding it.
 */
public abstract class QueuedEventChannel implements EventChannel {

    // ---- guarded by this
    private final ArrayDeque<CmEvent> events = new ArrayDeque<>();
    private Notifier armed;
    private boolean closed;

    /**
     * Queues {@code event} unless the channel is closed; returns the notifier that was armed (now disarmed), for
     * the caller to run after releasing its own locks, or null.
     */
    protected final Notifier enqueue(CmEvent event) {
        synchronized (this) {
            if (closed) {
                return null;
            }
            events.addLast(event);
            Notifier notifier = armed;
            armed = null;
            return notifier;
        }
    }

    @Override
    public final CmEvent poll() throws FabricException {
        synchronized (this) {
            ensureOpen();
            return events.pollFirst();
        }
    }

    @Override
    public final void requestNotify(Notifier notifier) throws FabricException {
        Objects.requireNonNull(notifier, "notifier");
        synchronized (this) {
            ensureOpen();
            if (events.isEmpty()) {
                armed = notifier;
                return;
            }
            armed = null;
        }
        notifier.signal();
    }

    private void ensureOpen() throws FabricException {
        if (closed) {
            throw new FabricException("event channel is closed");
        }
    }

    @Override
    public final void close() {
        synchronized (this) {
            closed = true;
            events.clear();
            armed = null;
        }
        closed();
    }

    /** Called once the channel is closed (outside its lock): the fabric forgets it. */
    protected abstract void closed();
}
