package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.Notifier;
import java.util.ArrayDeque;
import java.util.Objects;

/**
 * A FIFO of connection-manager events with a one-shot notifier.
 *
 * <p>Thread-safe. Its lock is a leaf; the notifier runs after it is released, on the thread that posted the event
 * (usually the watcher).
 */
final class ShmEventChannel implements EventChannel {

    final ShmFabric fabric;

    // ---- guarded by this
    private final ArrayDeque<CmEvent> events = new ArrayDeque<>();
    private Notifier armed;
    private boolean closed;

    ShmEventChannel(ShmFabric fabric) {
        this.fabric = fabric;
    }

    void post(CmEvent event) {
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
            notifier.signal();
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
