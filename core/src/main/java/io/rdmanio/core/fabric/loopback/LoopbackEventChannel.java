package io.rdmanio.core.fabric.loopback;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.Notifier;
import io.rdmanio.core.fabric.QueuedEventChannel;

/**
 * The loopback fabric's event channel. Events are posted under connection-manager and queue-pair locks; the
 * notifier runs after every fabric lock is released.
 *
 * <p>Thread-safe.
 */
final class LoopbackEventChannel extends QueuedEventChannel {

    final LoopbackFabric fabric;

    LoopbackEventChannel(LoopbackFabric fabric) {
        this.fabric = fabric;
    }

    /** Queues an event; an armed notifier is recorded in {@code fx} to run after the locks are released. */
    void post(Effects fx, CmEvent event) {
        Notifier notifier = enqueue(event);
        if (notifier != null) {
            fx.signal(notifier);
        }
    }

    @Override
    protected void closed() {
        fabric.closed(this);
    }
}
