package io.rdmanio.core.fabric.loopback;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.Notifier;
import java.util.ArrayDeque;
import java.util.Objects;

/**
 * A FIFO of connection-manager events with a one-shot notifier.
 *
 * <p>Thread-safe. Its lock is a leaf: it is taken under connection-manager and queue-pair locks, and nothing is
 * locked or called while holding it; the notifier runs after every fabric lock is released.
 */
final class LoopbackEventChannel implements EventChannel {

    final LoopbackFabric fabric;

    // ---- guarded by this
    private final ArrayDeque<CmEvent> events = new ArrayDeque<>();
    private Notifier armed;
    private boolean closed;

    LoopbackEventChannel(LoopbackFabric fabric) {
        this.fabric = fabric;
    }

    /** Queues an event; an armed notifier is recorded in {@code fx} to run after the locks are released. */
    void post(Effects fx, CmEvent event) {
        Notifier notifier;
        synchronized (this) {
            if (closed) {
                return;
            }
            events.addLast(event);
            notifier = armed;
            armed = null;
        }
        if (notifier != null) {
            fx.signal(notifier);
        }
    }

    @Override
    public CmEvent poll() throws FabricException {
        synchronized (this) {
            ensureOpen();
            return events.pollFirst();
        }
    }

    @Override
    public void requestNotify(Notifier notifier) throws FabricException {
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
    public void close() {
        synchronized (this) {
            closed = true;
            events.clear();
            armed = null;
        }
        fabric.closed(this);
    }
}
