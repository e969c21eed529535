package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.Notifier;
import io.rdmanio.core.fabric.QueuedEventChannel;

/**
 * The shm fabric's event channel. The notifier runs on the thread that posted the event (usually the watcher),
 * after the channel's lock is released.
 *
 * <p>Thread-safe.
 */
final class ShmEventChannel extends QueuedEventChannel {

    final ShmFabric fabric;

    ShmEventChannel(ShmFabric fabric) {
        this.fabric = fabric;
    }

    void post(CmEvent event) {
        Notifier notifier = enqueue(event);
        if (notifier != null) {
            notifier.signal();
        }
    }

    @Override
    protected void closed() {
        fabric.closed(this);
    }
}
