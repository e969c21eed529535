package io.rdmanio.core.fabric.disni.verbs;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.Notifier;
import java.util.ArrayDeque;

/**
 * SPI events of the ids created on this channel, in order. The fabric's connection-manager thread (and, for
 * in-band setup messages, whichever thread polls completions) posts them; the owner polls.
 *
 * <p>Thread-safe. Notifiers run after the lock is released.
 */
final class VerbsEventChannel implements EventChannel {

    private final VerbsFabric fabric;

    // ---- guarded by this
    private final ArrayDeque<CmEvent> events = new ArrayDeque<>();
    private Notifier notifier;
    private boolean closed;

    VerbsEventChannel(VerbsFabric fabric) {
        this.fabric = fabric;
    }

    void post(CmEvent event) {
        Notifier n;
        synchronized (this) {
            if (closed) {
                return;
            }
            events.add(event);
            n = notifier;
            notifier = null;
        }
        if (n != null) {
            n.signal();
        }
    }

    @Override
    public synchronized CmEvent poll() {
        return events.poll();
    }

    @Override
    public void requestNotify(Notifier n) {
        synchronized (this) {
            if (events.isEmpty() && !closed) {
                notifier = n;
                return;
            }
            notifier = null;
        }
        n.signal();
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            events.clear();
            notifier = null;
        }
        fabric.closed(this);
    }
}
