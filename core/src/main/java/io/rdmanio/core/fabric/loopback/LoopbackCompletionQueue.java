package io.rdmanio.core.fabric.loopback;

import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.Notifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Objects;

/**
 * A bounded ring of completions, plus the list of queue pairs whose posted work reports here and has not been
 * carried out yet ("work"). Polling first carries out that work, then drains the ring.
 *
 * <p>Thread-safe; callers serialize {@link #poll}. Lock order: queue-pair locks, then this queue's lock; nothing
 * else is locked under it except leaf locks, and notifiers run after it is released (see {@link Effects}).
 * Overflowing {@link #entries} is fatal for every queue pair attached here, as on hardware.
 */
final class LoopbackCompletionQueue implements CompletionQueue {

    final LoopbackFabric fabric;
    final int entries;

    // ---- guarded by this: the completion ring
    private final long[] wrId;
    private final int[] status;
    private final int[] opcode;
    private final int[] byteLen;
    private final int[] qpNum;
    /** For send-queue completions, the queue pair and the work request's sequence number, to free send slots. */
    private final LoopbackQueuePair[] sendQp;
    private final long[] sendSeq;
    private int head;
    private int count;
    private boolean overrun;
    private boolean closed;
    private Notifier armed;

    // ---- guarded by this: queue pairs with work to carry out, each with the role it has here
    private LoopbackQueuePair[] work = new LoopbackQueuePair[16];
    private boolean[] workAsSender = new boolean[16];
    private int workHead;
    private int workCount;

    // ---- guarded by this: queue pairs using this queue, failed together on overrun
    private final ArrayList<LoopbackQueuePair> attached = new ArrayList<>();

    LoopbackCompletionQueue(LoopbackFabric fabric, int entries) {
        this.fabric = fabric;
        this.entries = entries;
        wrId = new long[entries];
        status = new int[entries];
        opcode = new int[entries];
        byteLen = new int[entries];
        qpNum = new int[entries];
        sendQp = new LoopbackQueuePair[entries];
        sendSeq = new long[entries];
    }

    // ---------------------------------------------------------------------------------------------------------
    // Producer side, called with queue-pair locks held.

    /**
     * Adds a completion. {@code qp} and {@code seq} are given for send-queue completions (else {@code null}).
     * A full queue turns into an overrun, recorded in {@code fx} to fail the attached queue pairs.
     */
    void add(Effects fx, int qpNumber, long id, int st, int op, int len, LoopbackQueuePair sender, long seq) {
        Notifier notifier;
        synchronized (this) {
            if (closed || overrun) {
                return;
            }
            if (count == entries) {
                overrun = true;
                fx.overrun(this);
            } else {
                int i = head + count;
                if (i >= entries) {
                    i -= entries;
                }
                wrId[i] = id;
                status[i] = st;
                opcode[i] = op;
                byteLen[i] = len;
                qpNum[i] = qpNumber;
                sendQp[i] = sender;
                sendSeq[i] = seq;
                count++;
            }
            notifier = armed;
            armed = null;
        }
        if (notifier != null) {
            fx.signal(notifier);
        }
    }

    /**
     * Records that {@code qp} has posted work that reports here ({@code asSender}: its send completions; else
     * the receive completions of its peer). With {@code kick}, a poll would now carry out some of it, so an armed
     * notifier fires.
     */
    void addWork(Effects fx, LoopbackQueuePair qp, boolean asSender, boolean kick) {
        Notifier notifier = null;
        synchronized (this) {
            if (closed) {
                return;
            }
            if (!qp.isQueuedOn(asSender)) {
                if (workCount == work.length) {
                    growWork();
                }
                int i = (workHead + workCount) % work.length;
                work[i] = qp;
                workAsSender[i] = asSender;
                workCount++;
                qp.setQueuedOn(asSender, true);
            }
            if (kick) {
                notifier = armed;
                armed = null;
            }
        }
        if (notifier != null) {
            fx.signal(notifier);
        }
    }

    private void growWork() {
        int n = work.length;
        LoopbackQueuePair[] w = new LoopbackQueuePair[n * 2];
        boolean[] s = new boolean[n * 2];
        for (int k = 0; k < workCount; k++) {
            w[k] = work[(workHead + k) % n];
            s[k] = workAsSender[(workHead + k) % n];
        }
        work = w;
        workAsSender = s;
        workHead = 0;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Consumer side.

    @Override
    public int poll(Completions out) throws FabricException {
        Objects.requireNonNull(out, "out");
        out.count(0);
        Effects fx = Effects.begin();
        try {
            synchronized (this) {
                ensurePollable();
            }
            carryOutWork(fx);
            synchronized (this) {
                ensurePollable();
                int n = Math.min(count, out.capacity());
                for (int k = 0; k < n; k++) {
                    int i = head;
                    out.wrId[k] = wrId[i];
                    out.status[k] = status[i];
                    out.opcode[k] = opcode[i];
                    out.byteLen[k] = byteLen[i];
                    out.qpNum[k] = qpNum[i];
                    LoopbackQueuePair qp = sendQp[i];
                    if (qp != null) {
                        qp.retireSends(sendSeq[i] + 1);
                        sendQp[i] = null;
                    }
                    head = i + 1 == entries ? 0 : i + 1;
                }
                count -= n;
                out.count(n);
                return n;
            }
        } finally {
            fx.end();
        }
    }

    /** Carries out the posted work recorded here; work the fault policy holds back stays recorded. */
    private void carryOutWork(Effects fx) {
        int rounds;
        synchronized (this) {
            rounds = workCount;
        }
        for (; rounds > 0; rounds--) {
            LoopbackQueuePair qp;
            boolean asSender;
            synchronized (this) {
                if (workCount == 0) {
                    return;
                }
                qp = work[workHead];
                asSender = workAsSender[workHead];
                work[workHead] = null;
                workHead = (workHead + 1) % work.length;
                workCount--;
                qp.setQueuedOn(asSender, false);
            }
            qp.carryOut(fx, Integer.MAX_VALUE, true);
            if (qp.hasWorkInFlight()) {
                addWork(fx, qp, asSender, false);
            }
        }
    }

    private void ensurePollable() throws FabricException {
        if (closed) {
            throw new FabricException("completion queue is closed");
        }
        if (overrun) {
            throw new FabricException("completion queue overrun: more than " + entries
                + " completions were pending; the queue pairs on it are in error and disconnected (size the queue"
                + " for every outstanding send and receive of its queue pairs)");
        }
    }

    /**
     * Arms the queue. Work a poll would carry out is carried out first, so the notifier fires at once only if a
     * completion is really pending (or a random-release fault holds work that a later poll may release).
     */
    @Override
    public void requestNotify(Notifier notifier) throws FabricException {
        Objects.requireNonNull(notifier, "notifier");
        Effects fx = Effects.begin();
        try {
            synchronized (this) {
                if (closed) {
                    throw new FabricException("completion queue is closed");
                }
            }
            carryOutWork(fx);
            synchronized (this) {
                if (count == 0 && !overrun && !pollWouldCarryOutWork()) {
                    armed = notifier;
                    return;
                }
                armed = null;
            }
            fx.signal(notifier);
        } finally {
            fx.end();
        }
    }

    private boolean pollWouldCarryOutWork() {
        for (int k = 0; k < workCount; k++) {
            if (work[(workHead + k) % work.length].pollWouldCarryOut()) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Queue pairs attached.

    synchronized void attach(LoopbackQueuePair qp) {
        attached.add(qp);
    }

    synchronized void detach(LoopbackQueuePair qp) {
        attached.remove(qp);
    }

    /** Fails every queue pair on this queue after an overrun. Called without locks. */
    void failAttached(Effects fx) {
        LoopbackQueuePair[] qps;
        synchronized (this) {
            qps = attached.toArray(new LoopbackQueuePair[0]);
        }
        for (LoopbackQueuePair qp : qps) {
            qp.fail(fx, "completion queue overrun (more than " + entries + " completions pending)");
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            armed = null;
            Arrays.fill(sendQp, null);
            Arrays.fill(work, null);
            count = 0;
            workCount = 0;
        }
        fabric.closed(this);
    }
}
