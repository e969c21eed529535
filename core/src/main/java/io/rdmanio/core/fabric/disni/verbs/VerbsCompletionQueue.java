package io.rdmanio.core.fabric.disni.verbs;

import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.Notifier;
import java.io.IOException;
import java.nio.channels.SelectableChannel;

/**
 * An SPI completion queue: a ring of {@code entries} completions, filled from the fabric's device completion
 * queue by whichever thread drains it (a poller of any queue, or the fabric's completion thread). Its wakeup
 * channel is the fabric's, shared by every queue.
 *
 * <p>Thread-safe: every field is guarded by the fabric's completion lock ({@link VerbsFabric#cqLock}). Holding more
 * than {@code entries} completions is an overrun, as on a device: the queue's queue pairs fail and {@link #poll}
 * throws from then on. The notifier runs under the completion lock (it must not call back into the fabric, as the
 * SPI says).
 */
final class VerbsCompletionQueue implements CompletionQueue {

    private final VerbsFabric fabric;
    final int entries;

    // ---- guarded by fabric.cqLock
    private final long[] wrId;
    private final int[] status;
    private final int[] opcode;
    private final int[] byteLen;
    private final int[] qpNum;
    private int head;
    private int count;
    private Notifier notifier;
    /** The armed notifier has no watcher of the wakeup channel: the completion thread must deliver it. */
    private boolean relayed;
    private boolean overrun;
    private boolean closed;

    VerbsCompletionQueue(VerbsFabric fabric, int entries) {
        this.fabric = fabric;
        this.entries = entries;
        wrId = new long[entries];
        status = new int[entries];
        opcode = new int[entries];
        byteLen = new int[entries];
        qpNum = new int[entries];
    }

    VerbsFabric fabricOf() {
        return fabric;
    }

    /** Adds one completion (drain, under the completion lock); false on overrun. */
    boolean add(long id, int st, int op, int len, int qp) {
        assert Thread.holdsLock(fabric.cqLock);
        if (closed) {
            return true;
        }
        if (count == entries) {
            overrun = true;
            Notifier n = notifier;
            if (n != null) {
                notifier = null;
                fabric.disarmed(relayed);
                n.signal();
            }
            return false;
        }
        int i = head + count;
        if (i >= entries) {
            i -= entries;
        }
        wrId[i] = id;
        status[i] = st;
        opcode[i] = op;
        byteLen[i] = len;
        qpNum[i] = qp;
        count++;
        Notifier n = notifier;
        if (n != null) {
            notifier = null;
            fabric.disarmed(relayed);
            n.signal();
        }
        return true;
    }

    @Override
    public int poll(Completions out) throws IOException {
        synchronized (fabric.cqLock) {
            ensureUsable();
            fabric.drainLocked(false);
            ensureUsable();
            int n = Math.min(count, out.capacity());
            for (int k = 0; k < n; k++) {
                out.wrId[k] = wrId[head];
                out.status[k] = status[head];
                out.opcode[k] = opcode[head];
                out.byteLen[k] = byteLen[head];
                out.qpNum[k] = qpNum[head];
                if (++head == entries) {
                    head = 0;
                }
            }
            count -= n;
            out.count(n);
            return n;
        }
    }

    @Override
    public SelectableChannel wakeupChannel() {
        return fabric.wakeupChannel();
    }

    @Override
    public void requestNotify(Notifier n) throws IOException {
        requestNotify(n, false);
    }

    @Override
    public void requestNotify(Notifier n, boolean watched) throws IOException {
        boolean relay = !watched || fabric.wakeupChannel() == null;
        synchronized (fabric.cqLock) {
            ensureUsable();
            fabric.drainLocked(true);
            if (count > 0 || overrun) {
                if (notifier != null) {
                    notifier = null;
                    fabric.disarmed(relayed);
                }
                n.signal();
                return;
            }
            if (notifier == null) {
                relayed = relay;
                fabric.armed(relay);
            } else if (relay && !relayed) {
                relayed = true;
                fabric.relayed();
            }
            notifier = n;
            // A completion that arrived before the device was armed is moved here now and runs n.
            fabric.ensureDeviceArmedLocked();
        }
    }

    @Override
    public void withdrawRelay() {
        synchronized (fabric.cqLock) {
            if (notifier != null && relayed) {
                relayed = false;
                fabric.unrelayed();
            }
        }
    }

    private void ensureUsable() throws IOException {
        if (closed) {
            throw new FabricException("the completion queue is closed");
        }
        if (overrun) {
            throw new FabricException("completion queue overrun: more than " + entries + " completions were pending; "
                + "its queue pairs failed");
        }
    }

    @Override
    public void close() {
        synchronized (fabric.cqLock) {
            if (closed) {
                return;
            }
            closed = true;
            if (notifier != null) {
                notifier = null;
                fabric.disarmed(relayed);
            }
        }
        fabric.closed(this);
    }
}
