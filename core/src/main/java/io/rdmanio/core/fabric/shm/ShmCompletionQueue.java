package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.Notifier;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A completion queue: a view over the completion rings of the queue pairs attached to it (their local send
 * completions and the shared receive rings their peers fill). Polling reads those rings; it takes no lock, makes
 * no system call and allocates nothing.
 *
 * <p>Callers serialize {@link #poll} (it is the single consumer of every ring it reads). {@link #requestNotify}
 * arms each attached queue pair's shared flag, then re-checks for pending completions; a producer that finds the
 * flag rings a doorbell, and the watcher runs the notifier. Local completions run it on the producing thread.
 */
final class ShmCompletionQueue implements CompletionQueue {

    final ShmFabric fabric;
    final int entries;
    private final AtomicReference<Notifier> armed = new AtomicReference<>();
    /** Attached queue pairs, copied on write. */
    private volatile ShmQueuePair[] attached = new ShmQueuePair[0];
    private volatile boolean closed;
    /** Consumer only: where the next poll starts, so one busy queue pair does not starve the others. */
    private int next;

    ShmCompletionQueue(ShmFabric fabric, int entries) {
        this.fabric = fabric;
        this.entries = entries;
    }

    synchronized void attach(ShmQueuePair qp) {
        ShmQueuePair[] now = Arrays.copyOf(attached, attached.length + 1);
        now[now.length - 1] = qp;
        attached = now;
    }

    synchronized void detach(ShmQueuePair qp) {
        ShmQueuePair[] now = attached;
        for (int i = 0; i < now.length; i++) {
            if (now[i] == qp) {
                ShmQueuePair[] less = new ShmQueuePair[now.length - 1];
                System.arraycopy(now, 0, less, 0, i);
                System.arraycopy(now, i + 1, less, i, now.length - i - 1);
                attached = less;
                return;
            }
        }
    }

    @Override
    public int poll(Completions out) throws FabricException {
        Objects.requireNonNull(out, "out");
        if (closed) {
            throw new FabricException("completion queue is closed");
        }
        ShmQueuePair[] qps = attached;
        int n = qps.length;
        int k = 0;
        if (n > 0) {
            int start = next < n ? next : 0;
            for (int j = 0; j < n && k < out.capacity(); j++) {
                ShmQueuePair qp = qps[(start + j) % n];
                if (qp.sendCq == this) {
                    k = qp.drainSends(out, k);
                }
                if (qp.recvCq == this) {
                    k = qp.drainReceives(out, k);
                }
            }
            next = start + 1;
        }
        out.count(k);
        return k;
    }

    @Override
    public void requestNotify(Notifier notifier) throws FabricException {
        Objects.requireNonNull(notifier, "notifier");
        if (closed) {
            throw new FabricException("completion queue is closed");
        }
        armed.set(notifier);
        boolean pending = false;
        for (ShmQueuePair qp : attached) {
            if (qp.recvCq == this) {
                qp.armReceives();
            }
            pending |= qp.hasPending(this);
        }
        if (pending) {
            // Fired here: a flag left armed would only cost the producer a needless doorbell.
            for (ShmQueuePair qp : attached) {
                if (qp.recvCq == this) {
                    qp.disarmReceives();
                }
            }
            fire();
        }
    }

    /** Runs the armed notifier, if any, once. Called by producers and by the watcher on a doorbell. */
    void fire() {
        if (armed.get() != null) {
            Notifier n = armed.getAndSet(null);
            if (n != null) {
                n.signal();
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        armed.set(null);
        fabric.closed(this);
    }
}
