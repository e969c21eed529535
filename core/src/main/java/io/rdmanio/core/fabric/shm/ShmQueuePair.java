package io.rdmanio.core.fabric.shm;

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
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One side of an shm connection. Its receive queue and the completion queue of its receives live in the
 * connection's rings ({@link ShmRingsDescriptor}, a cell of a {@link ShmRingArena}); its send completions live in
 * a local ring. A send is carried out while it is posted: take the peer's oldest published receive, copy
 * into the peer's mapped region, release the completion record, mark this queue pair in the ready map of the
 * peer's completion queue ({@link ShmReadyMapDescriptor}) unless it is marked already, and ring the doorbell only if the peer armed.
 *
 * <p>Posting takes this queue pair's lock (uncontended: the engine serializes posting per connection). Polling
 * is lock-free: the completion queue's poller is the single consumer of both completion rings. Entering the
 * error state closes the receive queue to the peer (an atomic flag in the ring), so a receive is either taken by
 * the peer, whose completion then arrives, or flushed here, never both.
 *
 * <p>Nothing read from the rings is trusted: the peer process can write anything into it. Every counter,
 * sequence and field is checked against what this side knows (its own counts, the ring's capacity, the receive it
 * posted) where it is read, and a watcher's periodic {@link #check} covers a side that is parked and reads nothing.
 * A value that cannot be fails the connection with a {@link CmEvent#PROTOCOL_ERROR} naming the field and the
 * value, after which the ring is never read again (every posted receive is flushed).
 */
final class ShmQueuePair implements QueuePair {

    static final int STATE_INIT = 0;
    static final int STATE_RTS = 1;
    static final int STATE_ERROR = 2;
    static final int STATE_DESTROYED = 3;

    /** Why a connection ended, as told to the peer in a disconnect message. */
    static final int CAUSE_NORMAL = 0;
    static final int CAUSE_RECEIVER_NOT_READY = 1;
    static final int CAUSE_FAILURE = 2;

    private static final int WR_SEND = 0;
    /** A send whose payload is gathered from the caller's two buffers at post time (postSendInline). */
    private static final int WR_SEND_INLINE = 1;
    /** The cause a post reports when the peer had closed its receive queue by an orderly disconnect. */
    private static final String PEER_ENDED_IN_ORDER = "the peer ended the connection: disconnected";

    final ShmFabric fabric;
    final ShmCmId owner;
    final ShmCompletionQueue sendCq;
    final ShmCompletionQueue recvCq;
    private final int qpNum;
    private final int maxSendWr;
    private final int maxRecvWr;
    private final int maxInlineData;
    /** Capacity of this side's rings (a power of two at least maxRecvWr), told to the peer at setup. */
    final int recvCapacity;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile int state = STATE_INIT;

    // ---- set once under lock by attach; read by the poller after it sees attached == true. Dropped (null) by
    // destroy, so that a destroyed queue pair still referenced (from a closed connection, a channel the application
    // keeps) pins neither the ring's mapping nor the peer's: the poller reads it once and takes null as no rings.
    private ByteBuffer rings;
    private int myRecvQueue;
    private int myCompletions;
    private int peerRecvQueue;
    private int peerCompletions;
    private int peerCapacity;
    private int capacity0;
    private int capacity1;
    private long ringNonce;
    private ShmPeer peer;
    private ShmLink link;
    private volatile boolean attached;
    /** This queue pair's index in the ready maps of sendCq and recvCq; set by the owning id on creation. */
    int sendIndex = -1;
    int recvIndex = -1;

    // ---- guarded by lock: the ready map of the peer's receive completion queue, found on the first post
    private ByteBuffer peerMap;
    private int peerMapRkey;
    private int peerMapCapacity;
    private int peerMapIndex;
    /** The peer's wakeup pipe as the peer's ready map names it (its descriptor number there), -1 for none. */
    private int peerWakeupFd = -1;
    /** This process's non-blocking descriptor of that pipe: UNOPENED until the first watched ring, -1 unusable. */
    private int peerWakeup = UNOPENED;
    private static final int UNOPENED = -2;

    // ---- guarded by lock: send side
    private long sendTail;
    /** Receives taken from the peer's queue so far (this side is their only taker). */
    private long taken;
    /** Written only by the poller of sendCq: posts below this sequence number have freed their slot. */
    private volatile long sendRetired;

    // ---- local send completions: produced under lock, consumed by the poller of sendCq
    private final long[] scWrId;
    private final long[] scSeq;
    private final int[] scStatus;
    private final int[] scByteLen;
    private volatile long scTail;
    private volatile long scHead;

    // ---- receive side: mirror of posted receives (wrId for completions and flushes, region for the publish)
    private final long[] rWrId;
    private final ShmMemoryRegion[] rRegion;
    private final int[] rOffset;
    private final int[] rLength;
    /** Guarded by lock: receives written to the shared ring. */
    private long recvPublished;
    private volatile long recvPosted;
    /** Written only by the poller of recvCq. */
    private volatile long recvPolled;
    /** How many receives the peer had taken when this side closed its receive queue; later ones are flushed. */
    private volatile long closedTaken = Long.MAX_VALUE;
    /** The peer will take no more receives and release no more completions: it said so, or it is gone. */
    private volatile boolean peerQuiescent;
    private boolean peerReleased;
    /** Guarded by lock: the peer's process ended without a DISCONNECT (its socket closed by the kernel). */
    private boolean peerExited;
    /** Guarded by lock: what {@link #publishStanding} last wrote, so that an unchanged standing costs no store. */
    private long standing = -1;
    /** Accepting side: the arena cell holding the rings, given back to the peer's arenas at destroy. */
    private ShmRingArena.Cell cell;
    /** The ring broke its invariants: it is never read again, and every posted receive is flushed. */
    private volatile boolean ringBroken;
    /** Watcher only: the peer's count of receives taken from this side's queue, as last checked (monotonic). */
    private long checkedTaken;

    ShmQueuePair(ShmFabric fabric, ShmCmId owner, Config config) throws FabricException {
        if (!(config.sendCq() instanceof ShmCompletionQueue s) || s.fabric != fabric
            || !(config.recvCq() instanceof ShmCompletionQueue r) || r.fabric != fabric) {
            throw new IllegalArgumentException("the completion queues of an shm queue pair must come from the same"
                + " shm fabric");
        }
        ensureRange("maxSendWr", config.maxSendWr(), 1, ShmFabric.MAX_QUEUE_DEPTH);
        ensureRange("maxRecvWr", config.maxRecvWr(), 1, ShmFabric.MAX_QUEUE_DEPTH);
        ensureRange("maxInlineData", config.maxInlineData(), 0, ShmFabric.MAX_INLINE);
        this.fabric = fabric;
        this.owner = owner;
        this.sendCq = s;
        this.recvCq = r;
        this.qpNum = fabric.nextQpNum();
        this.maxSendWr = config.maxSendWr();
        this.maxRecvWr = config.maxRecvWr();
        this.maxInlineData = config.maxInlineData();
        this.recvCapacity = ShmRingsDescriptor.capacityFor(maxRecvWr);
        scWrId = new long[maxSendWr];
        scSeq = new long[maxSendWr];
        scStatus = new int[maxSendWr];
        scByteLen = new int[maxSendWr];
        rWrId = new long[maxRecvWr];
        rRegion = new ShmMemoryRegion[maxRecvWr];
        rOffset = new int[maxRecvWr];
        rLength = new int[maxRecvWr];
    }

    private static void ensureRange(String name, int value, int min, int max) throws FabricException {
        if (value < min || value > max) {
            throw new FabricException(name + " must be between " + min + " and " + max + " on the shm fabric: "
                + value);
        }
    }

    @Override
    public int qpNum() {
        return qpNum;
    }

    @Override
    public boolean isError() {
        return state >= STATE_ERROR;
    }

    int state() {
        return state;
    }

    /** Receives posted over the queue pair's life. */
    long postedReceives() {
        return recvPosted;
    }

    @Override
    public String toString() {
        return "shm queue pair " + qpNum;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Setup.

    /**
     * Joins the connection's rings as {@code side} (0: accepting, 1: connecting) and publishes the receives
     * posted so far. Called once by the id, before the peer may send.
     */
    void attach(ByteBuffer ringFile, long nonce, int side, int capacity0, int capacity1, ShmPeer peerFabric,
                ShmLink socket) {
        attach(ringFile, nonce, side, capacity0, capacity1, peerFabric, socket, null);
    }

    /** As above; {@code ownCell}, when not null, is the accepting side's arena cell holding {@code ringFile}. */
    void attach(ByteBuffer ringFile, long nonce, int side, int capacity0, int capacity1, ShmPeer peerFabric,
                ShmLink socket, ShmRingArena.Cell ownCell) {
        lock.lock();
        try {
            rings = ringFile;
            cell = ownCell;
            ringNonce = nonce;
            this.capacity0 = capacity0;
            this.capacity1 = capacity1;
            myRecvQueue = ShmRingsDescriptor.recvQueueOffset(side, capacity0, capacity1);
            myCompletions = ShmRingsDescriptor.completionQueueOffset(side, capacity0, capacity1);
            peerRecvQueue = ShmRingsDescriptor.recvQueueOffset(1 - side, capacity0, capacity1);
            peerCompletions = ShmRingsDescriptor.completionQueueOffset(1 - side, capacity0, capacity1);
            peerCapacity = side == 0 ? capacity1 : capacity0;
            peer = peerFabric;
            link = socket;
            ShmRingsDescriptor.writeReadyMap(rings, myCompletions, recvCq.mapRkey(), recvIndex);
            if (state == STATE_INIT) {
                for (long seq = recvPublished; seq < recvPosted; seq++) {
                    publishReceive(seq);
                }
                recvPublished = recvPosted;
            } else {
                ShmRingsDescriptor.getAndCloseTaken(rings, myRecvQueue);
            }
            attached = true;
        } finally {
            lock.unlock();
        }
        fabric.attached(this);
    }

    /** The connection is established: sends may be posted. */
    void ready() {
        lock.lock();
        try {
            if (state == STATE_INIT) {
                state = STATE_RTS;
            }
        } finally {
            lock.unlock();
        }
    }

    private void publishReceive(long seq) {
        int i = (int) (seq % maxRecvWr);
        ShmRingsDescriptor.writeAndReleaseReceive(rings, myRecvQueue, recvCapacity, seq, rWrId[i],
            rRegion[i].rkey(), rOffset[i], rLength[i]);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Posting.

    @Override
    public void postRecv(long wrId, MemoryRegion region, int offset, int length) throws FabricException {
        String broken = null;
        lock.lock();
        try {
            ensureNotFailed();
            long posted = recvPosted;
            if (posted - recvPolled >= maxRecvWr) {
                throw new FabricException("receive queue full: " + maxRecvWr + " receives already posted on " + this
                    + " (maxRecvWr " + maxRecvWr + "); a slot frees when its completion is polled");
            }
            if (!(region instanceof ShmMemoryRegion mr) || mr.fabric != fabric) {
                throw new FabricException("receive refused: " + region + " is not a region of this shm fabric");
            }
            if (!mr.isValid()) {
                throw new FabricException("receive refused: " + mr + " is deregistered");
            }
            if (!mr.covers(offset, length)) {
                throw new FabricException("receive refused: [" + offset + ", " + offset + " + " + length
                    + ") is outside " + mr);
            }
            if ((mr.access() & MemoryRegion.LOCAL_WRITE) == 0) {
                throw new FabricException("receive into " + mr + " refused: the region lacks LOCAL_WRITE access");
            }
            if (!mr.isShared()) {
                throw new FabricException("receive into " + mr + " refused: the sender copies straight into the"
                    + " receive buffer, so it must be memory a peer process maps; allocate it with Fabric.allocate");
            }
            int i = (int) (posted % maxRecvWr);
            rWrId[i] = wrId;
            rRegion[i] = mr;
            rOffset[i] = offset;
            rLength[i] = length;
            if (attached && !ringBroken) {
                // The peer can only complete receives this side published: a completion already there means the
                // ring lies. (Its entry was last written a lap ago and polled here since: reading it costs no
                // miss, where the peer's taken counter, written on every send, would.)
                long found = ShmRingsDescriptor.getCompletionSequenceAcquire(rings, myCompletions, recvCapacity,
                    posted);
                if (!ShmRingsDescriptor.isEarlierLap(found, posted, recvCapacity)) {
                    broken = "field sequence of this side's completion queue entry " + (posted & (recvCapacity - 1))
                        + " is 0x" + Long.toHexString(found) + " before receive " + posted + " was published, expected "
                        + ShmRingsDescriptor.earlierLap(posted, recvCapacity);
                    ringBroken = true;
                } else {
                    publishReceive(posted);
                    recvPublished = posted + 1;
                }
            }
            recvPosted = posted + 1;
        } finally {
            lock.unlock();
        }
        if (broken != null) {
            fail(brokenCause(broken), CAUSE_FAILURE, false);
        }
    }

    @Override
    public void postSend(long wrId, MemoryRegion region, int offset, int length, int flags) throws FabricException {
        post(WR_SEND, wrId, region, offset, length, flags, null, 0, 0, null, 0);
    }

    @Override
    public void postSendInline(long wrId, ByteBuffer head, int headOffset, int headLength, ByteBuffer body,
                               int bodyOffset, int bodyLength, int flags) throws FabricException {
        QueuePair.ensureInlineSlice(this, "head", head, headOffset, headLength);
        QueuePair.ensureInlineSlice(this, "body", body, bodyOffset, bodyLength);
        post(WR_SEND_INLINE, wrId, null, 0, headLength + bodyLength, flags | INLINE, head, headOffset, headLength,
            body, bodyOffset);
    }

    /** {@code head}/{@code body}: the gathered payload of {@link #WR_SEND_INLINE} (the body is the rest). */
    private void post(int kind, long wrId, MemoryRegion region, int offset, int length, int flags, ByteBuffer head,
                      int headOffset, int headLength, ByteBuffer body, int bodyOffset) throws FabricException {
        String failure;
        int cause = CAUSE_FAILURE;
        boolean peerEnded = false;
        boolean signaled = (flags & SIGNALED) != 0;
        lock.lock();
        try {
            if (state != STATE_RTS) {
                ensureNotFailed();
                throw new FabricException("post on " + this + " refused: the queue pair is not connected");
            }
            long outstanding = sendTail - sendRetired;
            if (outstanding >= maxSendWr) {
                throw new FabricException("send queue full: " + outstanding + " work requests outstanding on "
                    + this + " (maxSendWr " + maxSendWr + "); a slot frees only when its completion, or that of"
                    + " a later signaled request, is polled");
            }
            if ((flags & INLINE) != 0 && length > maxInlineData) {
                throw new FabricException("inline send of " + length + " bytes on " + this
                    + " refused: maxInlineData is " + maxInlineData);
            }
            failure = carryOut(kind, wrId, region, offset, length, signaled, head, headOffset, headLength, body,
                bodyOffset);
            if (failure == PEER_ENDED_IN_ORDER) {
                cause = CAUSE_NORMAL;
                peerEnded = true;
            } else if (failure != null && failure.startsWith("receiver not ready")) {
                cause = CAUSE_RECEIVER_NOT_READY;
            }
        } finally {
            lock.unlock();
        }
        if (failure != null) {
            fail(failure, cause, peerEnded);
        } else if (signaled) {
            sendCq.fire();
        }
    }

    /**
     * Carries out one request under the lock: the whole of a send. Returns {@code null} on success, else the
     * cause of the connection's failure (the error completions are already added).
     */
    private String carryOut(int kind, long wrId, MemoryRegion region, int offset, int length, boolean signaled,
                            ByteBuffer head, int headOffset, int headLength, ByteBuffer body, int bodyOffset) {
        assert lock.isHeldByCurrentThread();
        long seq = sendTail++;
        ShmMemoryRegion src = region instanceof ShmMemoryRegion r ? r : null;
        if (kind != WR_SEND_INLINE && (src == null || src.fabric != fabric || !src.isValid()
            || !src.covers(offset, length))) {
            completeSend(wrId, seq, LOC_PROT_ERR, 0);
            return "local protection error: a posted request named memory outside a valid registered region ("
                + region + ", [" + offset + ", " + offset + " + " + length + "))";
        }
        long t = taken;
        long takenField = ShmRingsDescriptor.getTakenAcquire(rings, peerRecvQueue);
        if ((takenField & ShmRingsDescriptor.CLOSED) != 0) {
            return peerQueueClosed(wrId, seq);
        }
        if (peerMap == null) {
            String why;
            try {
                why = findPeerMap();
            } catch (IOException e) {
                completeSend(wrId, seq, RETRY_EXC_ERR, 0);
                return "the peer's completion queue cannot be mapped: " + e.getMessage();
            }
            if (why != null) {
                if ((ShmRingsDescriptor.getTakenAcquire(rings, peerRecvQueue) & ShmRingsDescriptor.CLOSED) != 0) {
                    // Closed meanwhile: its completion queue may be gone with it, which is no lie.
                    return peerQueueClosed(wrId, seq);
                }
                return ringBroken(wrId, seq, why);
            }
        }
        if (takenField != t) {
            return ringBroken(wrId, seq, "field taken of the peer's receive queue is " + takenField
                + ", expected " + t + " (this side is its only taker)");
        }
        long posted = ShmRingsDescriptor.getReceiveSequenceAcquire(rings, peerRecvQueue, peerCapacity, t);
        if (posted != t + 1) {
            if (!ShmRingsDescriptor.isEarlierLap(posted, t, peerCapacity)) {
                return ringBroken(wrId, seq, "field sequence of the peer's receive queue entry "
                    + (t & (peerCapacity - 1)) + " is " + posted + ", expected " + (t + 1) + " or "
                    + ShmRingsDescriptor.earlierLap(t, peerCapacity));
            }
            completeSend(wrId, seq, RNR_RETRY_EXC_ERR, 0);
            fabric.receiverNotReady();
            return "receiver not ready: a send from " + this + " arrived where the peer had no receive posted";
        }
        if (!ShmRingsDescriptor.compareAndSetTaken(rings, peerRecvQueue, t)) {
            if ((ShmRingsDescriptor.getTakenAcquire(rings, peerRecvQueue) & ShmRingsDescriptor.CLOSED) == 0) {
                return ringBroken(wrId, seq, "field taken of the peer's receive queue changed under its"
                    + " only taker (to " + ShmRingsDescriptor.getTakenAcquire(rings, peerRecvQueue) + ", from " + t
                    + ")");
            }
            // Only the peer changes the counter besides this side: it closed the queue meanwhile.
            return peerQueueClosed(wrId, seq);
        }
        taken = t + 1;
        int e = ShmRingsDescriptor.recvEntry(peerRecvQueue, peerCapacity, t);
        int recvRkey = rings.getInt(e + ShmRingsDescriptor.RECV_RKEY);
        int recvOffset = rings.getInt(e + ShmRingsDescriptor.RECV_OFFSET);
        int recvLength = rings.getInt(e + ShmRingsDescriptor.RECV_LENGTH);
        if (recvLength < 0) {
            ShmRingsDescriptor.beginCompletion(rings, peerCompletions, peerCapacity, t);
            releaseCompletion(t, LOC_PROT_ERR, 0);
            return ringBroken(wrId, seq, "field length of the peer's receive queue entry "
                + (t & (peerCapacity - 1)) + " is " + recvLength);
        }
        ShmRingsDescriptor.beginCompletion(rings, peerCompletions, peerCapacity, t);
        ByteBuffer dst;
        IOException unmapped = null;
        try {
            dst = peerRegion(recvRkey, MemoryRegion.LOCAL_WRITE);
        } catch (IOException ex) {
            dst = null;
            unmapped = ex;
        }
        if (dst == null || recvOffset < 0 || recvOffset > dst.capacity() - (long) recvLength) {
            releaseCompletion(t, LOC_PROT_ERR, 0);
            completeSend(wrId, seq, REM_OP_ERR, 0);
            return unmapped != null
                ? "remote operation error: the region of the receive the peer posted cannot be mapped here: "
                    + unmapped.getMessage()
                : "remote operation error: the receive the peer posted names a region it deregistered";
        }
        if (length > recvLength) {
            releaseCompletion(t, LOC_LEN_ERR, 0);
            completeSend(wrId, seq, REM_INV_REQ_ERR, 0);
            return "a send of " + length + " bytes from " + this + " is larger than the receive of "
                + recvLength + " bytes the peer posted (local length error at the receiver)";
        }
        if (kind == WR_SEND_INLINE) {
            dst.put(recvOffset, head, headOffset, headLength);
            dst.put(recvOffset + headLength, body, bodyOffset, length - headLength);
        } else if (length > 0) {
            dst.put(recvOffset, src.memory, offset, length);
        }
        releaseCompletion(t, SUCCESS, length);
        if (signaled) {
            completeSend(wrId, seq, SUCCESS, length);
        }
        return null;
    }

    /**
     * The ring broke an invariant seen by the sender (under lock): flushes the send (it did not happen; the queue
     * pair enters the error state, whose cause the DISCONNECTED event names) and returns that cause, a
     * {@link CmEvent#PROTOCOL_ERROR}.
     */
    private String ringBroken(long wrId, long seq, String what) {
        completeSend(wrId, seq, WR_FLUSH_ERR, 0);
        ringBroken = true;
        return brokenCause(what);
    }

    private String brokenCause(String what) {
        return CmEvent.PROTOCOL_ERROR + "the shm ring shared with process " + (peer == null ? "?" : peer.pid)
            + " (" + owner.remoteAddress() + ") is corrupt: " + what;
    }

    /**
     * The peer's region with {@code rkey} ({@link ShmPeer#region}), mapped on first use. Mapping opens the peer's
     * file for a moment: a process at its most open files (a program that opened connections up to its limit, as
     * TCP lets it) maps it with the fabric's spare descriptors rather than failing a healthy connection.
     */
    private ByteBuffer peerRegion(int rkey, int access) throws IOException {
        try {
            return peer.region(rkey, access);
        } catch (IOException e) {
            return fabric.withSpareDescriptor(() -> peer.region(rkey, access), e);
        }
    }

    /**
     * Maps the ready map the peer named in the rings (under lock); null when found, else which field of the
     * ring names no ready map, or an index outside it (the ring is then broken).
     */
    private String findPeerMap() throws IOException {
        int rkey = ShmRingsDescriptor.readyMapRkey(rings, peerCompletions);
        int index = ShmRingsDescriptor.readyMapIndex(rings, peerCompletions);
        ByteBuffer b = peerRegion(rkey, MemoryRegion.REMOTE_WRITE);
        String bad = b == null ? "field ready map rkey of the peer's completion queue is 0x"
            + Integer.toHexString(rkey) + ", not a live region of the peer" : ShmReadyMapDescriptor.check(b, index);
        if (bad != null) {
            return b == null ? bad : "the ready map named by the peer's completion queue (rkey 0x"
                + Integer.toHexString(rkey) + ", index " + index + ") is unusable: " + bad;
        }
        peerMapRkey = rkey;
        peerMapCapacity = b.getInt(ShmReadyMapDescriptor.CAPACITY_OFFSET);
        peerMapIndex = index;
        peerMap = b;
        peerWakeupFd = ShmReadyMapDescriptor.wakeupFd(b);
        return null;
    }

    /**
     * The peer closed its receive queue before this request took a receive. After an orderly disconnect the request
     * is flushed, as if the peer's DISCONNECT message (still on its way through the socket) had arrived first: the
     * connection ends in order, and the payload is dropped, as TCP drops data that reaches a closed socket. A
     * queue closed because the peer failed gives RETRY_EXC_ERR (on hardware, the retries a dead peer never
     * acknowledges).
     */
    private String peerQueueClosed(long wrId, long seq) {
        if (ShmRingsDescriptor.isClosedInOrder(rings, peerRecvQueue)) {
            completeSend(wrId, seq, WR_FLUSH_ERR, 0);
            return PEER_ENDED_IN_ORDER;
        }
        completeSend(wrId, seq, RETRY_EXC_ERR, 0);
        return "the peer's queue pair is not ready (it failed): transport retries exhausted";
    }

    private void releaseCompletion(long t, int status, int byteLen) {
        ShmRingsDescriptor.writeAndReleaseCompletion(rings, peerCompletions, peerCapacity, t, status, byteLen);
        // Marked once per drain of the peer: while the peer has not polled since, the mark still stands.
        if (ShmRingsDescriptor.fenceThenTryHint(rings, peerCompletions)) {
            ShmReadyMapDescriptor.markReady(peerMap, peerMapCapacity, peerMapIndex);
            int how = ShmReadyMapDescriptor.tryDisarm(peerMap);
            if (how != 0) {
                fabric.doorbellRung();
                // A selector watching the peer's wakeup pipe wakes at this byte itself; a waiter relying on the
                // peer's watcher, or a pipe that cannot be written, gets the socket's doorbell.
                boolean piped = (how & ShmReadyMapDescriptor.ARMED_WATCHED) != 0 && ringPeerPipe();
                if (!piped || (how & ShmReadyMapDescriptor.ARMED_RELAY) != 0) {
                    link.ringDoorbell();
                }
            }
        }
    }

    /** Writes a byte into the peer's wakeup pipe (under lock); false when it has none or it cannot be written. */
    private boolean ringPeerPipe() {
        int fd = peerWakeup;
        if (fd == UNOPENED) {
            fd = peer.wakeupWriter(peerMapRkey, peerWakeupFd);
            peerWakeup = fd;
        }
        return fd >= 0 && ShmNatives.ring(fd) == 0;
    }

    /** Adds a local send completion (under lock); the send queue depth bounds how many can be pending. */
    private void completeSend(long wrId, long seq, int status, int byteLen) {
        long t = scTail;
        int i = (int) (t % maxSendWr);
        scWrId[i] = wrId;
        scSeq[i] = seq;
        scStatus[i] = status;
        scByteLen[i] = byteLen;
        scTail = t + 1;
        sendCq.markReady(sendIndex);
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

    // ---------------------------------------------------------------------------------------------------------
    // Polling (the completion queue's single consumer).

    /** Moves what {@code cq} holds of this queue pair's completions into {@code out} from {@code k} on. */
    int drain(ShmCompletionQueue cq, Completions out, int k) {
        if (cq == sendCq) {
            k = drainSends(out, k);
        }
        if (cq == recvCq && k < out.capacity()) {
            ByteBuffer r = attached ? rings : null;
            if (r != null && !ringBroken) {
                ShmRingsDescriptor.clearHintedThenFence(r, myCompletions);
            }
            k = drainReceives(out, k);
        }
        return k;
    }

    int drainSends(Completions out, int k) {
        long h = scHead;
        long t = scTail;
        int cap = out.capacity();
        while (k < cap && h < t) {
            int i = (int) (h % maxSendWr);
            out.wrId[k] = scWrId[i];
            out.status[k] = scStatus[i];
            out.opcode[k] = OP_SEND;
            out.byteLen[k] = scByteLen[i];
            out.qpNum[k] = qpNum;
            sendRetired = scSeq[i] + 1;
            h++;
            k++;
        }
        scHead = h;
        return k;
    }

    int drainReceives(Completions out, int k) {
        long polled = recvPolled;
        long posted = recvPosted;
        int cap = out.capacity();
        ByteBuffer rings = attached ? this.rings : null; // read once: destroy drops it
        boolean hasRings = rings != null;
        String broken = null;
        while (k < cap && polled < posted) {
            int i = (int) (polled % maxRecvWr);
            boolean released = false;
            if (hasRings && !ringBroken) {
                long found = ShmRingsDescriptor.getCompletionSequenceAcquire(rings, myCompletions, recvCapacity,
                    polled);
                released = found == polled + 1;
                if (!released && found != ((polled + 1) | ShmRingsDescriptor.IN_PROGRESS)
                    && !ShmRingsDescriptor.isEarlierLap(found, polled, recvCapacity)) {
                    broken = "field sequence of this side's completion queue entry " + (polled & (recvCapacity - 1))
                        + " is 0x" + Long.toHexString(found) + ", expected " + (polled + 1) + ", in progress, or "
                        + ShmRingsDescriptor.earlierLap(polled, recvCapacity);
                    break;
                }
            }
            if (!released) {
                if (ringBroken) {
                    if (state < STATE_ERROR) {
                        break; // the failure is on its way (from the thread that found the ring broken)
                    }
                } else if (state < STATE_ERROR || (polled < closedTaken && !peerQuiescent)) {
                    break;
                } else {
                    // Flushable now; look once more, after reading the flush condition: a completion the peer
                    // released before it went quiet must arrive as data, not as a flush.
                    released = hasRings
                        && ShmRingsDescriptor.tryAcquireCompletion(rings, myCompletions, recvCapacity, polled);
                }
            }
            if (released && !ringBroken) {
                // (That the peer counted this receive taken is checked periodically, not here: its counter is
                // written on every send, and reading it would cost a cache miss per completion.)
                ShmMemoryRegion postedInto = rRegion[i];
                broken = postedInto == null ? null // destroyed meanwhile: nothing polled here is used any more
                    : ShmRingsDescriptor.checkReceive(rings, myRecvQueue, recvCapacity, polled, postedInto.rkey(),
                        rOffset[i], rLength[i]);
                if (broken != null) {
                    break;
                }
            }
            if (released) {
                int e = ShmRingsDescriptor.completionEntry(myCompletions, recvCapacity, polled);
                int status = rings.getInt(e + ShmRingsDescriptor.CQE_STATUS);
                int opcode = rings.getInt(e + ShmRingsDescriptor.CQE_OPCODE);
                int byteLen = rings.getInt(e + ShmRingsDescriptor.CQE_BYTE_LEN);
                broken = ShmRingsDescriptor.checkCompletion(status, opcode, byteLen, rLength[i]);
                if (broken != null) {
                    broken = broken + " in this side's completion queue entry " + (polled & (recvCapacity - 1));
                    break;
                }
                out.wrId[k] = rWrId[i];
                out.status[k] = status;
                out.opcode[k] = opcode;
                out.byteLen[k] = byteLen;
            } else {
                out.wrId[k] = rWrId[i];
                out.status[k] = WR_FLUSH_ERR;
                out.opcode[k] = OP_RECV;
                out.byteLen[k] = 0;
            }
            out.qpNum[k] = qpNum;
            rRegion[i] = null;
            polled++;
            k++;
        }
        recvPolled = polled;
        if (broken != null) {
            ringBroken = true;
            fail(brokenCause(broken), CAUSE_FAILURE, false);
        }
        return k;
    }

    /** Whether a poll of {@code cq} would return something from this queue pair now (the poller only). */
    boolean hasPending(ShmCompletionQueue cq) {
        if (cq == sendCq && scHead != scTail) {
            return true;
        }
        if (cq == recvCq) {
            long polled = recvPolled;
            if (polled < recvPosted) {
                ByteBuffer rings = attached ? this.rings : null; // read once: destroy drops it
                if (rings != null && !ringBroken) {
                    long found = ShmRingsDescriptor.getCompletionSequenceAcquire(rings, myCompletions, recvCapacity,
                        polled);
                    if (found == polled + 1 || (found != ((polled + 1) | ShmRingsDescriptor.IN_PROGRESS)
                        && !ShmRingsDescriptor.isEarlierLap(found, polled, recvCapacity))) {
                        return true; // released, or broken: a poll reports either
                    }
                }
                if (ringBroken) {
                    return state >= STATE_ERROR;
                }
                return state >= STATE_ERROR && (polled >= closedTaken || peerQuiescent);
            }
        }
        return false;
    }

    /** The connection's rings as mapped here, or {@code null} before attach and after destroy (for tests). */
    ByteBuffer rings() {
        return attached ? rings : null;
    }

    /** The peer fabric this queue pair is attached to, or {@code null} before attach and after destroy. */
    ShmPeer peer() {
        return attached ? peer : null;
    }

    /**
     * Watcher, periodically: checks the ring fields no one reads while both sides are parked (the header, the hinted
     * flags and ready-map names of both completion queues, the peer's ready map, both receive queues' taken counters,
     * closed-in-order marks and next entries, this side's next completion), so that a ring overwritten while nobody
     * produces fails within a period instead of leaving both ends waiting forever. Also marks this queue pair ready
     * and runs the notifier if a completion waits (a hint or a doorbell that never came: the peer may have set
     * {@code hinted} without marking the map, or cleared the map's armed flag without ringing).
     */
    void check() {
        if (!attached || ringBroken || state >= STATE_ERROR) {
            return;
        }
        String bad;
        boolean lostDoorbell = false;
        lock.lock();
        try {
            if (state >= STATE_ERROR) {
                return;
            }
            bad = checkLocked();
            if (bad != null) {
                ringBroken = true;
            } else {
                long polled = recvPolled;
                // Whatever the flags say: a completion that waits is worth a mark and a signal, which cost a
                // poll a look and are nothing when no one waits.
                lostDoorbell = polled < recvPosted
                    && ShmRingsDescriptor.tryAcquireCompletion(rings, myCompletions, recvCapacity, polled);
            }
        } finally {
            lock.unlock();
        }
        if (bad != null) {
            fail(brokenCause(bad), CAUSE_FAILURE, false);
        } else if (lostDoorbell) {
            recvCq.markReady(recvIndex);
            recvCq.fire();
        }
    }

    private String checkLocked() {
        assert lock.isHeldByCurrentThread();
        String header = ShmRingsDescriptor.checkHeader(rings, ringNonce, capacity0, capacity1);
        if (header != null) {
            return header;
        }
        int hinted = ShmRingsDescriptor.getHinted(rings, myCompletions);
        if (hinted != 0 && hinted != 1) {
            return "field hinted of this side's completion queue is " + hinted;
        }
        hinted = ShmRingsDescriptor.getHinted(rings, peerCompletions);
        if (hinted != 0 && hinted != 1) {
            return "field hinted of the peer's completion queue is " + hinted;
        }
        // This side named its ready map before the peer could send: the peer reads the names once, but a name
        // changed since is a ring overwritten.
        int rkey = ShmRingsDescriptor.readyMapRkey(rings, myCompletions);
        int index = ShmRingsDescriptor.readyMapIndex(rings, myCompletions);
        if (rkey != recvCq.mapRkey() || index != recvIndex) {
            return "fields ready map rkey and index of this side's completion queue are 0x" + Integer.toHexString(rkey)
                + " and " + index + ", written as 0x" + Integer.toHexString(recvCq.mapRkey()) + " and " + recvIndex;
        }
        String map = checkPeerMap();
        if (map != null) {
            return map;
        }
        // This side's next completion first, then the counter: a completion released (an acquire load) was counted
        // taken before, so the counter read after it must show it.
        long polled = recvPolled;
        long next = ShmRingsDescriptor.getCompletionSequenceAcquire(rings, myCompletions, recvCapacity, polled);
        long field = ShmRingsDescriptor.getTakenAcquire(rings, myRecvQueue);
        if (next == polled + 1 && field <= polled && recvPolled == polled) {
            return "completion " + polled + " is released, but field taken of this side's receive queue is "
                + field;
        }
        if (field < checkedTaken || field > recvPublished) {
            return "field taken of this side's receive queue is " + field + ", expected between " + checkedTaken
                + " and " + recvPublished + " (the receives published)";
        }
        checkedTaken = field;
        // This side writes its closed-in-order mark only when it closes its queue (under lock, entering the error
        // state); the peer's may be set an instant before its CLOSED bit, so only its value is checked.
        int inOrder = ShmRingsDescriptor.getClosedInOrder(rings, myRecvQueue);
        if (inOrder != 0) {
            return "field closed in order of this side's receive queue is " + inOrder + ", but this side has not"
                + " closed the queue";
        }
        inOrder = ShmRingsDescriptor.getClosedInOrder(rings, peerRecvQueue);
        if (inOrder != 0 && inOrder != 1) {
            return "field closed in order of the peer's receive queue is " + inOrder;
        }
        field = ShmRingsDescriptor.getTakenAcquire(rings, peerRecvQueue);
        if ((field & ~ShmRingsDescriptor.CLOSED) != taken) {
            return "field taken of the peer's receive queue is " + field + ", expected " + taken
                + " (this side is its only taker)";
        }
        long found = ShmRingsDescriptor.getReceiveSequenceAcquire(rings, peerRecvQueue, peerCapacity, taken);
        if (found != taken + 1 && !ShmRingsDescriptor.isEarlierLap(found, taken, peerCapacity)) {
            return "field sequence of the peer's receive queue entry " + (taken & (peerCapacity - 1)) + " is "
                + found + ", expected " + (taken + 1) + " or " + ShmRingsDescriptor.earlierLap(taken, peerCapacity);
        }
        found = ShmRingsDescriptor.getCompletionSequenceAcquire(rings, myCompletions, recvCapacity, polled);
        boolean expected = (found == polled + 1 && polled < recvPosted)
            || found == ((polled + 1) | ShmRingsDescriptor.IN_PROGRESS)
            || ShmRingsDescriptor.isEarlierLap(found, polled, recvCapacity);
        if (!expected && recvPolled == polled) {
            return "field sequence of this side's completion queue entry " + (polled & (recvCapacity - 1))
                + " is 0x" + Long.toHexString(found) + ", expected " + (polled + 1) + " or "
                + ShmRingsDescriptor.earlierLap(polled, recvCapacity);
        }
        return null;
    }

    /**
     * The peer's ready map (under lock): its names in the ring unchanged since the first send mapped it, and the map
     * still one with room for this queue pair's bit; once established, a map not yet mapped is looked up here, so a
     * bad name fails the connection before any send. Null when sound.
     */
    private String checkPeerMap() {
        if (peerMap == null) {
            if (state != STATE_RTS) {
                return null; // the peer names its map before it says ready
            }
            String bad;
            try {
                bad = findPeerMap();
            } catch (IOException e) {
                return null; // the peer is gone, or its region is: its socket or the first send reports that
            }
            if (bad != null
                && (ShmRingsDescriptor.getTakenAcquire(rings, peerRecvQueue) & ShmRingsDescriptor.CLOSED) != 0) {
                return null; // the peer closed its queue pair, and may have closed its completion queue since
            }
            return bad;
        }
        int rkey = ShmRingsDescriptor.readyMapRkey(rings, peerCompletions);
        int index = ShmRingsDescriptor.readyMapIndex(rings, peerCompletions);
        if (rkey != peerMapRkey || index != peerMapIndex) {
            return "fields ready map rkey and index of the peer's completion queue are 0x" + Integer.toHexString(rkey)
                + " and " + index + ", were 0x" + Integer.toHexString(peerMapRkey) + " and " + peerMapIndex;
        }
        String bad = ShmReadyMapDescriptor.check(peerMap, peerMapIndex);
        if (bad == null && peerMap.getInt(ShmReadyMapDescriptor.CAPACITY_OFFSET) != peerMapCapacity) {
            bad = "the peer's ready map changed its capacity from " + peerMapCapacity + " to "
                + peerMap.getInt(ShmReadyMapDescriptor.CAPACITY_OFFSET);
        }
        return bad;
    }

    /** Fails the connection because the peer broke the fabric's protocol outside the ring ({@code what}). */
    void failBroken(String what) {
        ringBroken = true;
        fail(CmEvent.PROTOCOL_ERROR + what, CAUSE_FAILURE, false);
    }

    /** Runs the receive queue's armed notifier: the watcher calls this on a doorbell. */
    void rung() {
        recvCq.fire();
    }

    @Override
    public void publishStanding(long consumed) {
        lock.lock();
        try {
            long v = consumed < 0 ? -1 : consumed;
            if (v != standing && attached && state < STATE_ERROR) {
                standing = v;
                ShmRingsDescriptor.setStanding(rings, myRecvQueue, v);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long peerStanding() {
        lock.lock();
        try {
            return peerExited && attached && rings != null && !ringBroken
                ? ShmRingsDescriptor.getStanding(rings, peerRecvQueue) : -1;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The peer's socket reached end of file without a DISCONNECT: its process ended (the kernel closed the socket)
     * and what it last published of its standing stays readable in the rings ({@link #peerStanding}).
     */
    void peerExited(String cause) {
        lock.lock();
        try {
            peerExited = state < STATE_ERROR;
        } finally {
            lock.unlock();
        }
        fail(cause, CAUSE_FAILURE, true);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Failure and teardown.

    /**
     * Puts this side in the error state (once), closes its receive queue to the peer and tells the owning id,
     * which reports DISCONNECTED and tells the peer. Called without locks.
     *
     * @param fromPeer the peer reported the end (or is gone): it will take no more receives
     */
    void fail(String cause, int code, boolean fromPeer) {
        boolean first;
        lock.lock();
        try {
            first = enterErrorLocked(code == CAUSE_NORMAL);
            if (fromPeer || ringBroken) {
                peerQuiescent = true;
            }
        } finally {
            lock.unlock();
        }
        if (fromPeer && code == CAUSE_RECEIVER_NOT_READY && first) {
            fabric.receiverNotReady();
        }
        owner.connectionFailed(cause, code, fromPeer);
        // Flushes are local completions: mark them, as a peer marks what it releases.
        sendCq.markReady(sendIndex);
        recvCq.markReady(recvIndex);
        sendCq.fire();
        recvCq.fire();
    }

    /** @param inOrder an orderly disconnect: the peer's sender flushes what it still posts, without an error */
    private boolean enterErrorLocked(boolean inOrder) {
        if (state >= STATE_ERROR) {
            return false;
        }
        state = STATE_ERROR;
        if (attached && standing >= 0) {
            // A failed connection reads as a reset to a survivor, whatever this process does next.
            standing = -1;
            ShmRingsDescriptor.setStanding(rings, myRecvQueue, -1);
        }
        long closed;
        if (!attached) {
            closed = 0;
        } else if (inOrder) {
            closed = ShmRingsDescriptor.markInOrderThenCloseTaken(rings, myRecvQueue);
        } else {
            closed = ShmRingsDescriptor.getAndCloseTaken(rings, myRecvQueue);
        }
        if (closed < recvPolled || closed > recvPublished) {
            // Not a count the peer can have reached: nothing it says about this queue is trusted any more.
            ringBroken = true;
            peerQuiescent = true;
        }
        closedTaken = closed;
        return true;
    }

    /** Destroys this queue pair: it leaves its completion queues and drops its hold on the peer's mappings. */
    void destroy() {
        ShmPeer p;
        ShmRingArena.Cell c;
        lock.lock();
        try {
            enterErrorLocked(true);
            state = STATE_DESTROYED;
            for (int k = 0; k < rRegion.length; k++) {
                rRegion[k] = null;
            }
            p = peerReleased ? null : peer;
            c = peerReleased ? null : cell;
            peerReleased = true;
            // Nothing reads them once destroyed (posts and the periodic check stop at the state, under this lock;
            // the poller reads the rings once, null as none). Dropped so that whoever still references this queue
            // pair (the application's closed channel, through its connection and id) keeps no mapping alive: the
            // peer's region directory, the regions of it mapped here, its ring arena (the fabric's released peer
            // is unmapped only when collected), which for a peer that exited is memory nobody else holds.
            peer = null;
            peerMap = null;
            rings = null;
            cell = null;
        } finally {
            lock.unlock();
        }
        sendCq.detach(this, sendIndex);
        if (recvCq != sendCq) {
            recvCq.detach(this, recvIndex);
        }
        fabric.detached(this);
        if (c != null && p != null) {
            // This side is done with the rings; the peer may still be finishing a write (the cell rests first).
            p.releaseCell(c);
        }
        if (p != null) {
            fabric.releasePeer(p);
        }
    }
}
