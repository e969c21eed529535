package io.rdmanio.core.fabric.loopback;

import static io.rdmanio.core.fabric.Completions.LOC_LEN_ERR;
import static io.rdmanio.core.fabric.Completions.LOC_PROT_ERR;
import static io.rdmanio.core.fabric.Completions.OP_RECV;
import static io.rdmanio.core.fabric.Completions.OP_SEND;
import static io.rdmanio.core.fabric.Completions.REM_INV_REQ_ERR;
import static io.rdmanio.core.fabric.Completions.REM_OP_ERR;
import static io.rdmanio.core.fabric.Completions.RETRY_EXC_ERR;
import static io.rdmanio.core.fabric.Completions.RNR_RETRY_EXC_ERR;
import static io.rdmanio.core.fabric.Completions.SUCCESS;
import static io.rdmanio.core.fabric.Completions.WR_FLUSH_ERR;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.QueuePair;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One side of a loopback connection: a send queue of posted work requests not yet carried out, and a receive
 * queue of posted receives, both preallocated rings of primitives.
 *
 * <p>Posting takes this queue pair's lock only. Carrying out a send (or an error that ends the connection) takes
 * the locks of both sides, lower {@link #qpNum} first. Completion-queue and event-channel locks are taken under
 * them; notifiers run only after every lock is released ({@link Effects}).
 *
 * <p>A posted send is carried out when the sender's send completion queue or the receiver's receive
 * completion queue is next polled or armed, or when a fault hook releases it. The payload of a non-inline send is
 * read at that moment, so memory reused before the completion is caught.
 */
final class LoopbackQueuePair implements QueuePair {

    private static final AtomicInteger NEXT_QP_NUM = new AtomicInteger(0x11);

    static final int STATE_INIT = 0;
    static final int STATE_RTS = 1;
    static final int STATE_ERROR = 2;
    static final int STATE_DESTROYED = 3;

    /** Queue depths and inline size beyond these are refused, as a device's limits would refuse them. */
    static final int MAX_WR = 1 << 16;
    static final int MAX_INLINE = 65536;

    final LoopbackFabric fabric;
    final LoopbackCmId owner;
    final LoopbackCompletionQueue sendCq;
    final LoopbackCompletionQueue recvCq;
    private final int qpNum;
    private final int maxSendWr;
    private final int maxRecvWr;
    private final int maxInlineData;
    final ReentrantLock lock = new ReentrantLock();

    // ---- guarded by lock (both sides' locks for writes once connected)
    /** Set once, under both locks, when the connection is established. */
    private volatile LoopbackQueuePair peer;
    private volatile int state = STATE_INIT;
    /** Whether this side's DISCONNECTED event was delivered. */
    private boolean disconnectReported;

    // ---- guarded by lock: send queue. Sequence numbers count every post; slot = seq % maxSendWr.
    /** Oldest posted work request not yet carried out; requests in [sendHead, sendTail) are in flight. */
    private long sendHead;
    private long sendTail;
    private final long[] sWrId;
    private final LoopbackMemoryRegion[] sRegion;
    private final int[] sOffset;
    private final int[] sLength;
    private final int[] sFlags;
    /** A status decided at post time (bad local memory, injected fault), applied when the request is carried out. */
    private final int[] sForced;
    private final ByteBuffer inline;
    /** Written only by the poller of {@link #sendCq}: posts below this sequence number have freed their slot. */
    private volatile long sendRetired;

    // ---- guarded by lock: receive queue. Receives in [recvHead, recvVisible) may be consumed; those in
    // [recvVisible, recvTail) are withheld by a freeze fault.
    private long recvHead;
    private long recvVisible;
    private long recvTail;
    private final long[] rWrId;
    private final LoopbackMemoryRegion[] rRegion;
    private final int[] rOffset;
    private final int[] rLength;
    private boolean receivesFrozen;

    // ---- guarded by lock: injected completion error
    private int failCountdown;
    private int failStatus;

    // ---- guarded by sendCq's lock / by the peer's recvCq's lock
    private boolean queuedAsSender;
    private boolean queuedAsPeer;

    LoopbackQueuePair(LoopbackFabric fabric, LoopbackCmId owner, Config config) throws FabricException {
        if (!(config.sendCq() instanceof LoopbackCompletionQueue s) || s.fabric != fabric
            || !(config.recvCq() instanceof LoopbackCompletionQueue r) || r.fabric != fabric) {
            throw new IllegalArgumentException("the completion queues of a loopback queue pair must come from the"
                + " same loopback fabric");
        }
        ensureRange("maxSendWr", config.maxSendWr(), 1, MAX_WR);
        ensureRange("maxRecvWr", config.maxRecvWr(), 1, MAX_WR);
        ensureRange("maxInlineData", config.maxInlineData(), 0, MAX_INLINE);
        this.fabric = fabric;
        this.owner = owner;
        this.sendCq = s;
        this.recvCq = r;
        this.qpNum = NEXT_QP_NUM.getAndIncrement() & 0xffffff;
        this.maxSendWr = config.maxSendWr();
        this.maxRecvWr = config.maxRecvWr();
        this.maxInlineData = config.maxInlineData();
        int n = maxSendWr;
        sWrId = new long[n];
        sRegion = new LoopbackMemoryRegion[n];
        sOffset = new int[n];
        sLength = new int[n];
        sFlags = new int[n];
        sForced = new int[n];
        inline = ByteBuffer.allocate(maxInlineData == 0 ? 0 : n * maxInlineData);
        int m = maxRecvWr;
        rWrId = new long[m];
        rRegion = new LoopbackMemoryRegion[m];
        rOffset = new int[m];
        rLength = new int[m];
    }

    private static void ensureRange(String name, int value, int min, int max) throws FabricException {
        if (value < min || value > max) {
            throw new FabricException(name + " must be between " + min + " and " + max + " on the loopback fabric: "
                + value);
        }
    }

    @Override
    public int qpNum() {
        return qpNum;
    }

    @Override
    public boolean isError() {
        int s = state;
        return s == STATE_ERROR || s == STATE_DESTROYED;
    }

    LoopbackQueuePair peer() {
        return peer;
    }

    int state() {
        return state;
    }

    @Override
    public String toString() {
        return "queue pair " + qpNum;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Posting.

    @Override
    public void postRecv(long wrId, MemoryRegion region, int offset, int length) throws FabricException {
        lock.lock();
        try {
            ensureNotFailed();
            if (recvTail - recvHead >= maxRecvWr) {
                throw new FabricException("receive queue full: " + maxRecvWr + " receives already posted on " + this
                    + " (maxRecvWr " + maxRecvWr + ")");
            }
            LoopbackMemoryRegion mr = ensureLocal(region, offset, length);
            if ((mr.access() & MemoryRegion.LOCAL_WRITE) == 0) {
                throw new FabricException("receive into " + mr + " refused: the region lacks LOCAL_WRITE access");
            }
            int i = (int) (recvTail % maxRecvWr);
            rWrId[i] = wrId;
            rRegion[i] = mr;
            rOffset[i] = offset;
            rLength[i] = length;
            recvTail++;
            if (!receivesFrozen) {
                recvVisible = recvTail;
            }
        } finally {
            lock.unlock();
        }
    }

    private LoopbackMemoryRegion ensureLocal(MemoryRegion region, int offset, int length) throws FabricException {
        if (!(region instanceof LoopbackMemoryRegion mr) || mr.fabric != fabric) {
            throw new FabricException("receive refused: " + region + " is not a region of this loopback fabric");
        }
        if (!mr.isValid()) {
            throw new FabricException("receive refused: " + mr + " is deregistered");
        }
        if (!mr.covers(offset, length)) {
            throw new FabricException("receive refused: [" + offset + ", " + offset + " + " + length
                + ") is outside " + mr);
        }
        return mr;
    }

    @Override
    public void postSend(long wrId, MemoryRegion region, int offset, int length, int flags) throws FabricException {
        post(wrId, region, offset, length, flags, null, 0, 0, null, 0);
    }

    @Override
    public void postSendInline(long wrId, ByteBuffer head, int headOffset, int headLength, ByteBuffer body,
                               int bodyOffset, int bodyLength, int flags) throws FabricException {
        QueuePair.ensureInlineSlice(this, "head", head, headOffset, headLength);
        QueuePair.ensureInlineSlice(this, "body", body, bodyOffset, bodyLength);
        post(wrId, null, 0, headLength + bodyLength, flags | INLINE, head, headOffset, headLength, body,
            bodyOffset);
    }

    /**
     * {@code head}/{@code body}: a payload gathered from unregistered memory (an inline send without a region);
     * copied here, at post time.
     */
    private void post(long wrId, MemoryRegion region, int offset, int length, int flags, ByteBuffer head,
                      int headOffset, int headLength, ByteBuffer body, int bodyOffset) throws FabricException {
        Effects fx = Effects.begin();
        try {
            lock.lock();
            try {
                ensureNotFailed();
                LoopbackQueuePair p = peer;
                if (state != STATE_RTS || p == null) {
                    throw new FabricException("post on " + this + " refused: the queue pair is not connected");
                }
                long outstanding = sendTail - sendRetired;
                if (outstanding >= maxSendWr) {
                    throw new FabricException("send queue full: " + outstanding + " work requests outstanding on "
                        + this + " (maxSendWr " + maxSendWr + "); a slot frees only when its completion, or that of"
                        + " a later signaled request, is polled");
                }
                boolean isInline = (flags & INLINE) != 0;
                if (isInline && length > maxInlineData) {
                    throw new FabricException("inline send of " + length + " bytes on " + this
                        + " refused: maxInlineData is " + maxInlineData);
                }
                int i = (int) (sendTail % maxSendWr);
                int forced = SUCCESS;
                LoopbackMemoryRegion mr = null;
                if (head != null) {
                    inline.put(i * maxInlineData, head, headOffset, headLength);
                    inline.put(i * maxInlineData + headLength, body, bodyOffset, length - headLength);
                } else if (region instanceof LoopbackMemoryRegion m && m.fabric == fabric && m.isValid()
                    && m.covers(offset, length)) {
                    mr = m;
                    if (isInline && length > 0) {
                        inline.put(i * maxInlineData, m.memory, offset, length);
                    }
                } else {
                    forced = LOC_PROT_ERR;
                }
                if (forced == SUCCESS) {
                    forced = takeInjectedStatus();
                }
                sWrId[i] = wrId;
                sRegion[i] = mr;
                sOffset[i] = offset;
                sLength[i] = length;
                sFlags[i] = flags;
                sForced[i] = forced;
                sendTail++;
                boolean kick = fabric.faults().pollWouldCarryOut(this, (int) (sendTail - sendHead));
                // Either side's poll carries the request out; only a request that will complete wakes the
                // sender, while the receiver always gets a completion.
                sendCq.addWork(fx, this, true, kick && ((flags & SIGNALED) != 0 || forced != SUCCESS));
                p.recvCq.addWork(fx, this, false, kick);
            } finally {
                lock.unlock();
            }
        } finally {
            fx.end();
        }
    }

    private void ensureNotFailed() throws FabricException {
        int s = state;
        if (s == STATE_ERROR) {
            throw new FabricException(this + " is in the error state (the connection failed or was disconnected)");
        }
        if (s == STATE_DESTROYED) {
            throw new FabricException(this + " is destroyed");
        }
    }

    private int takeInjectedStatus() {
        if (failCountdown > 0 && --failCountdown == 0) {
            return failStatus;
        }
        return fabric.faults().takeAnyQpStatus();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Carrying out posted work.

    boolean hasWorkInFlight() {
        lock.lock();
        try {
            return sendTail > sendHead;
        } finally {
            lock.unlock();
        }
    }

    /** A lock-free estimate for arming a notifier: whether a poll would carry out some of this side's work. */
    boolean pollWouldCarryOut() {
        int inFlight = (int) (sendTail - sendHead);
        return inFlight > 0 && fabric.faults().pollWouldCarryOut(this, inFlight);
    }

    boolean isQueuedOn(boolean asSender) {
        return asSender ? queuedAsSender : queuedAsPeer;
    }

    void setQueuedOn(boolean asSender, boolean queued) {
        if (asSender) {
            queuedAsSender = queued;
        } else {
            queuedAsPeer = queued;
        }
    }

    /** Frees send slots: called by the poller of {@link #sendCq} with the sequence after a polled completion. */
    void retireSends(long upTo) {
        if (upTo > sendRetired) {
            sendRetired = upTo;
        }
    }

    /**
     * Carries out up to {@code limit} in-flight work requests, oldest first.
     *
     * @param byPoll whether a poll asks (the fault policy decides how many); else a fault hook releases them
     * @return the number carried out
     */
    int carryOut(Effects fx, int limit, boolean byPoll) {
        LoopbackQueuePair p = lockPair();
        try {
            if (state != STATE_RTS || p == null) {
                return 0;
            }
            int inFlight = (int) (sendTail - sendHead);
            int n = Math.min(limit, inFlight);
            if (byPoll && n > 0) {
                n = Math.min(n, fabric.faults().allowance(this, inFlight));
            }
            int done = 0;
            while (done < n && state == STATE_RTS) {
                carryOutOldest(fx, p);
                done++;
            }
            return done;
        } finally {
            unlockPair(p);
        }
    }

    /** Carries out the oldest in-flight request. Both locks are held and both sides are ready to send. */
    private void carryOutOldest(Effects fx, LoopbackQueuePair p) {
        assert lock.isHeldByCurrentThread() && p.lock.isHeldByCurrentThread();
        long seq = sendHead;
        int i = (int) (seq % maxSendWr);
        int length = sLength[i];
        LoopbackMemoryRegion src = sRegion[i];
        sRegion[i] = null;
        sendHead = seq + 1;
        if (sForced[i] != SUCCESS) {
            completeSend(fx, i, seq, sForced[i]);
            String cause = sForced[i] == LOC_PROT_ERR
                ? "local protection error: a posted request named memory outside a valid registered region"
                : "injected completion error (" + Completions.statusName(sForced[i]) + ")";
            failConnection(fx, cause);
            return;
        }
        if (src != null && !src.isValid()) {
            completeSend(fx, i, seq, LOC_PROT_ERR);
            failConnection(fx, "local protection error: " + src + " was deregistered before the request was"
                + " carried out");
            return;
        }
        if (p.state != STATE_RTS) {
            completeSend(fx, i, seq, RETRY_EXC_ERR);
            failConnection(fx, "the peer's queue pair is not ready (transport retries exhausted)");
            return;
        }
        if (p.recvHead == p.recvVisible) {
            completeSend(fx, i, seq, RNR_RETRY_EXC_ERR);
            fabric.receiverNotReady();
            if (p.fabric != fabric) {
                p.fabric.receiverNotReady();
            }
            failConnection(fx, "receiver not ready: a send from " + this + " arrived at " + p
                + " where no receive was posted");
            return;
        }
        long rseq = p.recvHead;
        int r = (int) (rseq % p.maxRecvWr);
        LoopbackMemoryRegion dst = p.rRegion[r];
        p.rRegion[r] = null;
        p.recvHead = rseq + 1;
        if (!dst.isValid()) {
            p.recvCq.add(fx, p.qpNum, p.rWrId[r], LOC_PROT_ERR, OP_RECV, 0, null, 0);
            completeSend(fx, i, seq, REM_OP_ERR);
            failConnection(fx, "remote operation error: the receive at " + p + " named " + dst
                + ", deregistered after the receive was posted");
            return;
        }
        if (length > p.rLength[r]) {
            p.recvCq.add(fx, p.qpNum, p.rWrId[r], LOC_LEN_ERR, OP_RECV, 0, null, 0);
            completeSend(fx, i, seq, REM_INV_REQ_ERR);
            failConnection(fx, "a send of " + length + " bytes from " + this + " is larger than the receive of "
                + p.rLength[r] + " bytes posted at " + p);
            return;
        }
        if (length > 0) {
            if ((sFlags[i] & INLINE) != 0) {
                dst.memory.put(p.rOffset[r], inline, i * maxInlineData, length);
            } else {
                dst.memory.put(p.rOffset[r], src.memory, sOffset[i], length);
            }
        }
        p.recvCq.add(fx, p.qpNum, p.rWrId[r], SUCCESS, OP_RECV, length, null, 0);
        if ((sFlags[i] & SIGNALED) != 0) {
            completeSend(fx, i, seq, SUCCESS);
        }
    }

    private void completeSend(Effects fx, int i, long seq, int status) {
        sendCq.add(fx, qpNum, sWrId[i], status, OP_SEND, status == SUCCESS ? sLength[i] : 0, this, seq);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Connection state.

    /**
     * Locks this side and its peer (if any), lower queue-pair number first.
     *
     * @return the peer, locked too, or {@code null}
     */
    LoopbackQueuePair lockPair() {
        while (true) {
            LoopbackQueuePair p = peer;
            if (p == null) {
                lock.lock();
                if (peer == null) {
                    return null;
                }
                lock.unlock();
                continue;
            }
            lockBoth(this, p);
            return p;
        }
    }

    void unlockPair(LoopbackQueuePair p) {
        if (p != null) {
            p.lock.unlock();
        }
        lock.unlock();
    }

    static void lockBoth(LoopbackQueuePair a, LoopbackQueuePair b) {
        if (a == b) {
            a.lock.lock();
        } else if (a.qpNum < b.qpNum) {
            a.lock.lock();
            b.lock.lock();
        } else {
            b.lock.lock();
            a.lock.lock();
        }
    }

    /** Joins two queue pairs into a connection. Both must be fresh; called with the connection-manager lock. */
    static void connect(LoopbackQueuePair a, LoopbackQueuePair b) throws FabricException {
        lockBoth(a, b);
        try {
            for (LoopbackQueuePair q : new LoopbackQueuePair[] {a, b}) {
                if (q.state != STATE_INIT || q.peer != null) {
                    throw new FabricException(q + " cannot be connected: it is "
                        + (q.peer != null ? "already connected" : "in the error state or destroyed"));
                }
            }
            a.peer = b;
            b.peer = a;
            a.state = STATE_RTS;
            b.state = STATE_RTS;
        } finally {
            b.lock.unlock();
            a.lock.unlock();
        }
    }

    /** Fails the connection of this queue pair (both sides), as the given cause. Called without locks. */
    void fail(Effects fx, String cause) {
        LoopbackQueuePair p = lockPair();
        try {
            failConnection(fx, cause);
        } finally {
            unlockPair(p);
        }
    }

    /**
     * Puts both sides in the error state, flushes everything outstanding with {@link Completions#WR_FLUSH_ERR}
     * and reports DISCONNECTED to each side once. Both locks are held.
     */
    private void failConnection(Effects fx, String cause) {
        assert lock.isHeldByCurrentThread();
        LoopbackQueuePair p = peer;
        enterError(fx);
        if (p != null) {
            p.enterError(fx);
            reportDisconnected(fx, cause);
            p.reportDisconnected(fx, cause);
        }
    }

    private void enterError(Effects fx) {
        if (state == STATE_ERROR || state == STATE_DESTROYED) {
            return;
        }
        state = STATE_ERROR;
        for (long seq = sendHead; seq < sendTail; seq++) {
            int i = (int) (seq % maxSendWr);
            sRegion[i] = null;
            completeSendFlush(fx, i, seq);
        }
        sendHead = sendTail;
        for (long seq = recvHead; seq < recvTail; seq++) {
            int r = (int) (seq % maxRecvWr);
            rRegion[r] = null;
            recvCq.add(fx, qpNum, rWrId[r], WR_FLUSH_ERR, OP_RECV, 0, null, 0);
        }
        recvHead = recvTail;
        recvVisible = recvTail;
    }

    private void completeSendFlush(Effects fx, int i, long seq) {
        sendCq.add(fx, qpNum, sWrId[i], WR_FLUSH_ERR, OP_SEND, 0, this, seq);
    }

    private void reportDisconnected(Effects fx, String cause) {
        if (disconnectReported || state == STATE_DESTROYED) {
            return;
        }
        disconnectReported = true;
        owner.disconnected(fx, new CmEvent(CmEvent.Type.DISCONNECTED, owner, null, LoopbackCmId.EMPTY, cause));
    }

    /** Destroys this queue pair (after its connection, if any, was failed). Called without locks. */
    void destroy() {
        LoopbackQueuePair p = lockPair();
        try {
            state = STATE_DESTROYED;
            disconnectReported = true;
            for (int k = 0; k < sRegion.length; k++) {
                sRegion[k] = null;
            }
            for (int k = 0; k < rRegion.length; k++) {
                rRegion[k] = null;
            }
            sendHead = sendTail;
            recvHead = recvTail;
            recvVisible = recvTail;
        } finally {
            unlockPair(p);
        }
        sendCq.detach(this);
        recvCq.detach(this);
        fabric.closed(this);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Fault hooks.

    void injectFailure(int nth, int status) {
        lock.lock();
        try {
            failCountdown = nth;
            failStatus = status;
        } finally {
            lock.unlock();
        }
    }

    void freezeReceives(boolean frozen) {
        lock.lock();
        try {
            receivesFrozen = frozen;
            if (!frozen) {
                recvVisible = recvTail;
            }
        } finally {
            lock.unlock();
        }
    }
}
