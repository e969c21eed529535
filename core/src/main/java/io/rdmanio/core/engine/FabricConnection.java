package io.rdmanio.core.engine;

import static io.rdmanio.core.protocol.FrameDescriptor.HEADER_LENGTH;
import static io.rdmanio.core.protocol.FrameDescriptor.TYPE_CREDIT;
import static io.rdmanio.core.protocol.FrameDescriptor.TYPE_DATA;
import static io.rdmanio.core.protocol.FrameDescriptor.TYPE_FIN;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rdmanio.core.Logs;
import io.rdmanio.core.buffer.LentByteBuf;
import io.rdmanio.core.buffer.SlotPool;
import io.rdmanio.core.events.Recorder;
import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.Notifier;
import io.rdmanio.core.fabric.QueuePair;
import io.rdmanio.core.fabric.ResourceLimitException;
import io.rdmanio.core.protocol.CreditWindow;
import io.rdmanio.core.protocol.FrameDescriptor;
import io.rdmanio.core.protocol.HandshakeDescriptor;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * One connection of a {@link FabricEngine}: a receive ring of {@code D + C + 1} slots, send staging of {@code S}
 * slots, one slot of small control-frame entries, and the {@link CreditWindow} between them and the peer.
 *
 * <p>Thread-safety: every field below the lock banner is guarded by {@link #lock}. The reader, the writer, the
 * progress thread (completions, events), a closer and threads releasing lent buffers all take it; it is held only
 * for bounded work (copies of at most the caller's buffers, posts that never block). Lock order: the engine's
 * progress lock, then this lock, then leaf locks (the engine's waiter list and flush queue, the pool). Readiness
 * listeners are called after this lock is released.
 *
 * <p>Teardown follows verbs order: disconnect, wait until the queue pair has flushed every posted receive and
 * the DISCONNECTED event arrived, destroy the id (and its queue pair), then return the slots to the pool.
 */
final class FabricConnection implements ZeroCopyConnection, FabricEngine.Waitable {

    private static final Logger LOG = Logs.get(FabricConnection.class);

    /** Work-request ids: a tag in bits 40..47, a receive slot index or a send sequence number below. */
    /**
     * How long a write after the peer's disconnect waits for the receives still posted to complete, which tells a
     * reset from an orderly close (and so the write's outcome).
     */
    private static final long JUDGEMENT_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long RECV_TAG = 1L << 40;
    private static final long SEND_TAG = 2L << 40;
    private static final long TAG_MASK = 0xffL << 40;

    /** Bytes of one control-frame entry: a header and a handshake, rounded up. */
    private static final int CONTROL_ENTRY = 64;
    /** Control-frame entries per connection, at most (they share one slot). */
    private static final int MAX_CONTROL_ENTRIES = 8;
    /**
     * The most bytes a connection's receive side holds unread, its ring and its spill ({@link #spillLocked})
     * together, when the ring is smaller: about what the kernel's TCP holds for a reader that does not read on this
     * host's loopback (a writer's 3.5 MB go, 5 MB block).
     */
    static final long RECEIVE_HOLD_BYTES = 4L << 20;

    private static final byte KIND_DATA = 0;
    private static final byte KIND_CONTROL = 1;
    /** A data frame sent inline from the application's buffer: it holds no staging slot. */
    private static final byte KIND_INLINE = 2;

    static final int CONNECTING = 0;
    static final int OPEN = 1;
    static final int CLOSED = 2;

    private final FabricEngine engine;
    private final SlotPool pool;
    private final boolean client;
    private final long createdNanos = System.nanoTime();
    private final CmId id;
    private final FabricListener listener;
    private final InetSocketAddress remote;
    private final int slotSize;
    private final int payloadCapacity;
    private final int dataSlots;
    private final int controlSlots;
    private final int recvCount;
    private final int stagingCount;
    private final int controlEntries;
    private final int sendDepth;
    private final int signalInterval;
    private final int[] recvIds;
    private final int[] stagingIds;
    /** The slot holding this connection's control-frame entries; set by {@link #setUp}. */
    private int controlSlotId;
    private final long incarnation;
    /** Copied on write under {@link #listenersLock} (setup only), read without a lock and without allocating. */
    private volatile ReadinessListener[] readinessListeners = ReadinessListeners.NONE;
    private final Object listenersLock = new Object();
    /** The client's handshake, kept to name both sides' values if the server rejects it. */
    private ByteBuffer request;
    private QueuePair qp;
    private int qpNum = -1;
    private CompletionQueue cq;
    private int cqEntries;

    /** Guarded by the engine's flush queue. */
    boolean queuedForFlush;

    /** The writer's alone (one blocking writer at a time): the rest of a large direct write is still to come. */
    private boolean directRest;

    // ---- guarded by lock
    private final Object lock = new Object();
    private int state = CONNECTING;
    private boolean slotsAllocated;
    private IOException failure;
    /**
     * {@link #failure} is the peer's reset, which is reported as Linux reports a socket's ECONNRESET, once, to the
     * first call that sees it: a read first makes every later read fail with "Connection reset" (as the JDK's
     * channel remembers it) and writes with "Broken pipe"; a write first fails with "Connection reset by peer",
     * later writes with "Broken pipe", and reads then see end of stream.
     */
    private boolean failureIsReset;
    /** How the reset was first reported: 0 not yet, {@link #RESET_BY_READ} or {@link #RESET_BY_WRITE}. */
    private int resetReport;
    private CreditWindow credit;
    private boolean connectedOnce;
    /**
     * Client closed while its connect was under way: the connect completes and a FIN follows at once, as a TCP
     * client's close after the kernel finished the handshake (on loopback it always has), so the server accepts a
     * connection that reads -1 instead of never seeing it.
     */
    private boolean finAfterConnect;
    /**
     * How long a connect closed while pending still waits for the server's answer before it is given up: TCP's
     * handshake on one host is done before the close unless the listener's full backlog dropped the SYN, and a
     * client closed before its first retry (1 s) is never seen by the server. Answered in time, the connection
     * completes and sends its FIN; not, the request is abandoned, and a listener that held it skips it.
     */
    static final long PENDING_CONNECT_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);
    private boolean connectFinished;
    private boolean disconnectCalled;
    private boolean disconnectSeen;
    /**
     * A write went nowhere after the peer's orderly close: a send the fabric flushed after the peer's FIN, or the
     * one write accepted and dropped after DISCONNECTED (as TCP accepts the first write to a peer that closed and
     * fails the next, once the peer's reset came back).
     */
    private boolean wroteAfterPeerClose;
    /**
     * When the last staged frame, partly filled by small writes, began to be held back for more small writes to
     * join it ({@link #holdLastFrameLocked}); 0 while none is held.
     */
    private long holdSince;
    /** The last staged frame's bytes came from small writes only (see {@link #holdLastFrameLocked}). */
    private boolean smallTail;
    /**
     * The bytes in the peer's last unread frame if its reader read nothing since: the peer packs an arriving frame
     * onto that one when it fits (see {@link #frameCapLocked}).
     */
    private int peerTailFill;
    /** On the engine's list of connections holding a frame (guarded by that list). */
    boolean onHoldList;
    /** Bytes were written after the peer's FIN arrived (see {@link #judgeDisconnectLocked}). */
    private boolean sentAfterFin;
    /** {@link #finReceived}, for a write's look without the lock. */
    private volatile boolean finHint;
    /** The peer's RESET-flagged CREDIT frame arrived: its disconnect is a reset, even after its FIN. */
    private boolean peerReset;
    /**
     * The peer reset the connection after its FIN (TCP's CLOSE_WAIT): every write fails with "Broken pipe" and
     * reads end, as Linux reports a reset in that state (EPIPE, and the FIN's end of stream).
     */
    private boolean resetAfterFin;
    /** Data arrived after the local close: the connection is reset from the flush queue, as TCP resets then. */
    private boolean abortOnData;
    /** SO_LINGER is 0: a close at JVM exit is abortive. */
    private volatile boolean lingerZero;
    /** SO_OOBINLINE: an urgent byte from the peer is read in its place in the stream instead of dropped. */
    private volatile boolean oobInline;
    /** DISCONNECTED arrived: a write first lets progress judge whether the peer's FIN came before it. */
    private volatile boolean disconnectHint;
    private boolean userClosed;
    private boolean tornDown;
    /**
     * Client only: receive completions that arrived before ESTABLISHED was processed (the server may send as soon
     * as it saw this side's answer, and a fabric orders completions and events independently), as
     * (receive index, status, length) triples, replayed in order once the server's handshake gives the window.
     * Allocated at the first such frame: never on the data path.
     */
    private int[] early;
    private int earlyCount;
    private boolean finReceived;
    /**
     * DISCONNECTED arrived before FIN while receives were still posted: their completions (possibly the FIN, or
     * data) may still be in the completion queue behind the event, so reset-or-end-of-stream is judged once every
     * posted receive has completed.
     */
    private boolean disconnectJudgementPending;
    private boolean finPending;
    private boolean finPosted;
    private boolean finCompleted;
    private boolean outputShutdown;
    private boolean inputShutdown;
    private boolean writeBlocked;
    /** Counted in the engine's lingering connections (closed or failed, not yet torn down). */
    private boolean lingering;
    /** While lingering: when the engine resets this connection unless it delivers something first (nanoTime). */
    private long lingerDeadline;
    /** Bytes the application wrote and read: at exit, a connection still in use is not closed under its user. */
    private long appBytes;
    private long bytesWritten;
    private long bytesRead;
    /** Urgent bytes dropped unread (no SO_OOBINLINE): taken from the stream as a read takes bytes. */
    private long urgentDropped;
    /**
     * A server's connection that its listener holds and the application has not accepted yet: should this process
     * end, the kernel's listener would reset it, so no standing is published for it (guarded by lock).
     */
    private boolean unaccepted;
    /**
     * {@link #fillSeq} when the application's blocking write under way began ({@link #blockingWrite}), -1 when none
     * is: frames from there on hold only bytes of that write.
     */
    private long blockingWriteFrom = -1;
    /** What {@link #publishStandingLocked} last gave the queue pair. */
    private long publishedStanding = -1;
    /** Counted in the engine's owing connections: staged bytes or a FIN wait for credit. */
    private boolean owing;
    private int lastReady;
    /** Bytes or FIN arrived since readiness was last reported. */
    private boolean readEvent;
    // receive ring
    private int postedRecvs;
    private final int[] recvLen;
    private final int[] readQueue;
    private long readHead;
    private long readTail;
    private int headOffset;
    private long available;
    private final boolean[] lentOut;
    private LentByteBuf[] lent;
    /**
     * Bytes taken out of unread receive slots while the application neither read nor waited ({@link #spillLocked}),
     * oldest first: they come before every frame still in the ring, and reads take them first. Chunks of
     * {@link #payloadCapacity} bytes, allocated only while spilling, never on the path of a reader that reads.
     */
    private ArrayDeque<byte[]> spill;
    /** The read position in the first spill chunk. */
    private int spillHead;
    /** The bytes in the last spill chunk. */
    private int spillTail;
    /** Bytes held in {@link #spill}, counted in the engine's bound ({@link FabricEngine#SPILL_MAX_BYTES}). */
    private long spillBytes;
    /** Bytes {@link #respillLocked} may still move while the application reads the spill down. */
    private long respillBudget;
    /**
     * The most bytes {@link #spill} may hold: 0 once SO_RCVBUF was set (the application sized the window itself),
     * else what {@link #RECEIVE_HOLD_BYTES} leaves beyond the ring.
     */
    private final long spillLimit;
    // send staging: slots [freeSeq, postSeq) are posted, [postSeq, fillSeq) are filled and waiting for credit
    private final int[] stagingLen;
    /** Whether a staged frame is one urgent byte ({@link #writeUrgent}): sent alone, with its flag, never appended to. */
    private final boolean[] stagingUrgent;
    private long fillSeq;
    private long postSeq;
    private long freeSeq;
    private long controlPostSeq;
    private long controlFreeSeq;
    // send queue: [sendCompleted, sendPosted) are outstanding
    private final byte[] sendKind;
    private long sendPosted;
    private long sendCompleted;
    private int unsignalledRun;
    /** Data frames (staged or inline) posted and not yet completed: at most stagingCount, the send queue's share. */
    private int dataInFlight;
    /** The queue pair's inline limit: a whole frame (slotSize) when the fabric offers it, else 0. */
    private int inlineLimit;
    /** The header of an inline frame: the fabric copies it at post time, so one per connection serves all. */
    private ByteBuffer inlineHeader;
    private long finSeq = -1;
    /**
     * After an abortive close with sends in flight: the sequence of the signalled marker whose completion vouches
     * for every earlier send; the reset (disconnect) follows it. -1: none.
     */
    private long abortSeq = -1;

    private FabricConnection(FabricEngine engine, CmId id, boolean client, FabricListener listener,
                             InetSocketAddress remote, ConnectionOptions options) {
        this.engine = engine;
        this.pool = engine.pool;
        this.id = id;
        this.client = client;
        this.unaccepted = !client;
        this.listener = listener;
        this.remote = remote;
        EngineConfig config = engine.config;
        this.slotSize = config.slotSize();
        this.payloadCapacity = FrameDescriptor.payloadCapacity(slotSize);
        this.dataSlots = slots(options.receiveBufferSize(), config.ringDepth());
        this.spillLimit = options.receiveBufferSize() > 0 ? 0
            : Math.max(0, RECEIVE_HOLD_BYTES - (long) dataSlots * payloadCapacity);
        this.controlSlots = config.controlSlots();
        this.recvCount = CreditWindow.postedReceives(dataSlots, controlSlots);
        this.stagingCount = slots(options.sendBufferSize(), config.ringDepth());
        this.controlEntries = Math.min(MAX_CONTROL_ENTRIES, slotSize / CONTROL_ENTRY);
        this.sendDepth = stagingCount + controlEntries;
        this.signalInterval = Math.max(1, sendDepth / 4);
        this.recvIds = new int[recvCount];
        this.stagingIds = new int[stagingCount];
        this.recvLen = new int[recvCount];
        this.readQueue = new int[recvCount];
        this.lentOut = new boolean[recvCount];
        this.stagingLen = new int[stagingCount];
        this.stagingUrgent = new boolean[stagingCount];
        this.sendKind = new byte[sendDepth];
        this.incarnation = engine.nextIncarnation();
    }

    private int slots(int bytes, int defaultSlots) {
        if (bytes <= 0) {
            return defaultSlots;
        }
        return Math.max(1, Math.min(HandshakeDescriptor.MAX_SLOTS, bytes / slotSize));
    }

    /** Starts an active connect. */
    static FabricConnection connect(FabricEngine engine, InetSocketAddress remote, ConnectionOptions options)
        throws IOException {
        CmId id = engine.fabric.createId(engine.events());
        if (options.source() != null) {
            try {
                id.connectFrom(options.source());
            } catch (IOException | RuntimeException e) {
                id.close();
                throw e;
            }
        }
        FabricConnection c = new FabricConnection(engine, id, true, null, remote, options);
        try {
            c.setUp();
            engine.register(id, c);
            c.request = HandshakeDescriptor.allocate(HandshakeDescriptor.VERSION, HandshakeDescriptor.REASON_NONE,
                c.slotSize, c.dataSlots, c.controlSlots, c.incarnation);
            id.connect(remote, c.request.duplicate());
        } catch (IOException | RuntimeException e) {
            c.destroy();
            throw e;
        }
        return c;
    }

    /** Accepts a connect request whose handshake was checked; the id is owned by the connection from here on. */
    static FabricConnection accept(FabricEngine engine, FabricListener listener, CmEvent request,
                                   ConnectionOptions options, int peerDataSlots, int peerControlSlots)
        throws IOException {
        CmId id = request.id();
        FabricConnection c = new FabricConnection(engine, id, false, listener, id.remoteAddress(), options);
        try {
            c.setUp();
            synchronized (c.lock) {
                c.credit = new CreditWindow(c.dataSlots, c.controlSlots, peerDataSlots, peerControlSlots);
                c.connectedOnce = true;
            }
            engine.register(id, c);
            // The server's parameters travel with its accept: the client may send as soon as it is established.
            id.accept(HandshakeDescriptor.allocate(HandshakeDescriptor.VERSION, HandshakeDescriptor.REASON_NONE,
                c.slotSize, c.dataSlots, c.controlSlots, c.incarnation));
        } catch (IOException | RuntimeException e) {
            // Refused with the cause before the id goes: a client told only that the request was dropped cannot
            // tell a full server from a broken one.
            if (e instanceof ResourceLimitException limit) {
                engine.reject(id, HandshakeDescriptor.REASON_LIMIT, limit.limit());
            } else {
                engine.reject(id, HandshakeDescriptor.REASON_NO_RESOURCES, null);
            }
            c.destroy();
            throw e;
        }
        return c;
    }

    private void setUp() throws IOException {
        int[] ids = new int[recvCount + stagingCount + 1];
        pool.allocate(ids, ids.length);
        System.arraycopy(ids, 0, recvIds, 0, recvCount);
        System.arraycopy(ids, recvCount, stagingIds, 0, stagingCount);
        controlSlotId = ids[ids.length - 1];
        synchronized (lock) {
            slotsAllocated = true;
        }
        cqEntries = sendDepth + recvCount;
        cq = engine.reserveCq(cqEntries);
        // A whole frame inline, or nothing: a frame that fits goes straight from the application's buffer to the
        // peer, one copy fewer than staging it in registered memory first.
        int inline = engine.fabric.maxInlineData() >= slotSize ? slotSize : 0;
        qp = id.createQueuePair(new QueuePair.Config(cq, cq, sendDepth, recvCount, inline));
        qpNum = qp.qpNum();
        engine.registerQp(qpNum, this);
        synchronized (lock) {
            if (inline > 0) {
                inlineHeader = ByteBuffer.allocate(HEADER_LENGTH);
                inlineLimit = inline;
            }
            for (int i = 0; i < recvCount; i++) {
                postRecvLocked(i);
            }
        }
    }

    // -------------------------------------------------------------------------------------------------------------
    // Completions and events (progress thread, under the engine's progress lock).

    void onCompletion(long wrId, int status, int byteLen) {
        boolean fire;
        synchronized (lock) {
            if (tornDown) {
                return;
            }
            if ((wrId & TAG_MASK) == RECV_TAG) {
                onReceiveLocked((int) (wrId & 0xffffffffL), status, byteLen);
            } else {
                onSendLocked(wrId & 0xffffffffL, status);
            }
            flushLocked();
            judgeDisconnectLocked();
            tryTeardownLocked();
            fire = updateReadinessLocked();
        }
        signalWaiters();
        if (fire) {
            fireReadiness();
        }
    }

    /** "Connection refused: REASON", without saying it twice when the fabric's reason already does. */
    private String refusal(String reason) {
        if (reason == null) {
            return "Connection refused: " + remote;
        }
        return reason.regionMatches(true, 0, "connection refused", 0, 18)
            ? "Connection refused" + reason.substring(18) : "Connection refused: " + reason;
    }

    /**
     * After DISCONNECTED: once no receive is outstanding, every frame the peer sent has been seen. After its FIN,
     * the disconnect is a reset only if a RESET-flagged frame came ({@link #resetAfterFin}); without a FIN among
     * them the peer reset the connection, unless its process ended with nothing unsent or unread
     * ({@link QueuePair#peerStanding}).
     */
    private void judgeDisconnectLocked() {
        if (!disconnectJudgementPending || postedRecvs > 0) {
            return;
        }
        disconnectJudgementPending = false;
        if (failure == null && !userClosed && finReceived) {
            if (peerReset || sentAfterFin) {
                // A reset after the peer's FIN: it closed with bytes unread, or was sent bytes once closed. Bytes
                // sent after its FIN that it did not answer with a reset before its disconnect most often reached
                // a socket already closed (TCP's answer: a reset), rarely one that read them and closed after (TCP
                // then fails the write after the next); so they count as the write a reset answered.
                resetAfterFin = true;
                failLocked(new IOException("Broken pipe"), false);
            }
            return;
        }
        if (failure == null && !userClosed && !finReceived) {
            if (qp != null && qp.peerStanding() == bytesWritten) {
                // The peer's process ended with every byte it accepted sent and every byte sent to it taken: the
                // kernel would have closed its TCP socket with a FIN. End of stream, as after one.
                finReceived = true;
                readEvent = true;
                LOG.debug("the process of {} ended without closing, nothing unsent or unread: end of stream",
                    remote);
                return;
            }
            failLocked(new IOException("Connection reset by peer"), false);
            failureIsReset = failure != null;
        }
    }

    private void onReceiveLocked(int i, int status, int byteLen) {
        postedRecvs--;
        if (status != Completions.SUCCESS) {
            if (status == Completions.WR_FLUSH_ERR) {
                return;
            }
            if (status == Completions.RNR_RETRY_EXC_ERR) {
                engine.receiverNotReady.incrementAndGet();
            }
            if (status == Completions.LOC_LEN_ERR) {
                failLocked(new ProtocolException("protocol error from " + remote + ": frame larger than the "
                    + slotSize + "-byte receive slot (" + Completions.statusName(status) + ")"), true);
            } else {
                failLocked(new IOException("receive failed on the connection with " + remote + ": "
                    + Completions.statusName(status)), false);
            }
            return;
        }
        if (failure != null) {
            return;
        }
        if (credit == null) {
            // A client whose ESTABLISHED is still on its way: the frame waits for the server's handshake.
            if (early == null) {
                early = new int[3 * recvCount];
            }
            early[earlyCount++] = i;
            early[earlyCount++] = status;
            early[earlyCount++] = byteLen;
            return;
        }
        int slot = recvIds[i];
        ByteBuffer buf = pool.buffer(slot);
        int off = pool.offset(slot);
        String error = FrameDescriptor.checkHeader(buf, off, byteLen, slotSize);
        if (error != null) {
            protocolErrorLocked(error);
            return;
        }
        int type = FrameDescriptor.type(buf, off);
        if (finReceived && (type == TYPE_DATA || type == TYPE_FIN)) {
            protocolErrorLocked(FrameDescriptor.typeName(type) + " frame after FIN");
            return;
        }
        error = credit.onReceive(type, FrameDescriptor.dataCredit(buf, off), FrameDescriptor.controlCredit(buf, off));
        if (error != null) {
            protocolErrorLocked(error);
            return;
        }
        if (type == TYPE_CREDIT && FrameDescriptor.flags(buf, off) == FrameDescriptor.FLAG_RESET) {
            peerReset = true;
        }
        switch (type) {
            case TYPE_DATA: {
                int length = byteLen - HEADER_LENGTH;
                engine.bytesReceived.addAndGet(length);
                // After shutdownInput the bytes still arrive and wait unread, holding their slots, as they pile up
                // in a TCP socket's receive queue (the JDK reads -1 without looking at them): the writer is held
                // back by the window, and a close that finds them unread resets.
                boolean dropped = length == 1 && !oobInline
                    && FrameDescriptor.flags(buf, off) == FrameDescriptor.FLAG_URGENT;
                if (dropped) {
                    urgentDropped++;
                }
                // Linux answers bytes that reach a socket shut for both directions (FIN_WAIT with its input shut)
                // with a reset, as it answers those that reach a closed one; shut for input alone, they wait.
                boolean refused = userClosed || (inputShutdown && outputShutdown);
                if (length == 0 || refused || dropped) {
                    // An urgent byte a socket that does not inline urgent data never reads: as TCP keeps it out of
                    // the stream. Its slot is free again (credit returned as for a read).
                    repostDataLocked(i);
                    if (dropped && credit.unadvertisedData() >= credit.creditThreshold()) {
                        // A writer of urgent bytes alone gets its credit back without this side writing or reading.
                        engine.requestFlush(this);
                    }
                    if (length > 0 && refused && !abortOnData) {
                        // Bytes for a socket that was closed (or shut both ways): TCP answers them with a reset
                        // (the peer's next write fails, and this side's unsent bytes are dropped).
                        abortOnData = true;
                        engine.requestFlush(this);
                    }
                } else {
                    boolean packed = appendToLastUnreadLocked(buf, off, length);
                    if (packed) {
                        postRecvLocked(i);
                        credit.dataSlotPacked();
                    } else {
                        recvLen[i] = length;
                        readQueue[(int) (readTail++ % recvCount)] = i;
                    }
                    if (credit.packedGrantDue()
                        || (packed && credit.unadvertisedData() >= credit.creditThreshold())) {
                        engine.requestFlush(this);
                    }
                    available += length;
                    // Readable again even if READ never cleared: a selector that left bytes unread hears of more.
                    readEvent = true;
                    spillLocked(false);
                    if (spillBytes > 0 && respillLocked() > 0
                        && credit.unadvertisedData() >= credit.creditThreshold()) {
                        // Reads made room in the spill before these frames came: the window reopens as on TCP.
                        engine.requestFlush(this);
                    }
                }
                break;
            }
            case TYPE_FIN:
                finReceived = true;
                finHint = true;
                readEvent = true;
                postRecvLocked(i);
                break;
            default:
                postRecvLocked(i);
                break;
        }
    }

    /**
     * A frame that arrives behind an unread one whose slot has room for it is copied onto that one's end, and its
     * own slot is reposted at once, as the kernel collapses a TCP receive queue of small segments: the window is
     * counted in bytes there, in slots here, and a reader that does not read yet (one that waits for
     * {@code available()} to reach a message's length, say) would otherwise see a sender's small writes stop at one
     * per slot. Only a reader that is behind pays the copy; unread frames in a row then always fill more than one
     * slot between two, so the ring holds at least half its capacity in bytes whatever the writes' sizes.
     */
    private boolean appendToLastUnreadLocked(ByteBuffer src, int srcOff, int length) {
        if (readHead == readTail) {
            return false;
        }
        int last = readQueue[(int) ((readTail - 1) % recvCount)];
        int end = recvLen[last];
        if (end + length > payloadCapacity) {
            return false;
        }
        int slot = recvIds[last];
        pool.buffer(slot).put(pool.offset(slot) + HEADER_LENGTH + end, src, srcOff + HEADER_LENGTH, length);
        recvLen[last] = end + length;
        return true;
    }

    /**
     * While the application does not read (the engine's closer takes the arrivals for it, or {@code asked}: the
     * application asks what is {@code available()} instead of reading), unread frames that fill half the ring or
     * more are copied into the connection's spill and their slots reposted, returning their credit, as the kernel
     * grows a TCP socket's receive buffer for a reader that is behind: a writer that exits with more unsent bytes
     * than the ring holds is not kept waiting for its reader to read (TCP's kernel holds about 4 MB after the
     * writer's process has gone), and a reader that waits for {@code available()} to reach a message's length sees
     * it reached for messages larger than the ring. Up to {@link #RECEIVE_HOLD_BYTES} ring and spill together
     * per connection and the engine's bound in all; then the window closes as before. Never after SO_RCVBUF was set
     * (the application sized the window), after shutdownInput or close, or once received data was lent (zero
     * copy); a reader that reads never pays it (the closer stands aside while the application drives or waits).
     * The credit goes out with the next progress (the closer's, when nobody else drives).
     */
    private void spillLocked(boolean asked) {
        if (spillLimit == 0 || lent != null || inputShutdown || userClosed || failure != null || tornDown
            || readTail - readHead < Math.max(1, dataSlots / 2) || !(asked || engine.takingArrivalsForNobody())) {
            return;
        }
        if (spillBytes == 0) {
            respillBudget = spillLimit;
        }
        if (moveToSpillLocked(false) > 0 && credit.unadvertisedData() >= credit.creditThreshold()) {
            engine.requestFlush(this);
        }
    }

    /**
     * A read took spilled bytes while the ring is still half full or more (the writer is ahead), or frames fill
     * half the ring while a spill is held: as many of the ring's frames move into the room reads made, so that the writer's window reopens as soon as a TCP writer's would
     * (after a sixteenth of the window read, not after the whole spill), within {@link #respillBudget}: a reader
     * that stays behind pays that second copy for one spill's worth at most, then reads the ring down as before.
     * Returns the slots freed.
     */
    private int respillLocked() {
        if (respillBudget <= 0 || readTail - readHead < Math.max(1, dataSlots / 2) || failure != null || tornDown
            || inputShutdown) {
            return 0;
        }
        return moveToSpillLocked(true);
    }

    /** Moves whole unread frames from the ring's head to the spill's tail, within the bounds; returns how many. */
    private int moveToSpillLocked(boolean budgeted) {
        int freed = 0;
        while (readHead != readTail) {
            int i = readQueue[(int) (readHead % recvCount)];
            int n = recvLen[i] - headOffset;
            if (spillBytes + n > spillLimit || (budgeted && n > respillBudget) || !engine.reserveSpill(n)) {
                break;
            }
            if (budgeted) {
                respillBudget -= n;
            }
            int slot = recvIds[i];
            appendSpillLocked(pool.buffer(slot), pool.offset(slot) + HEADER_LENGTH + headOffset, n);
            spillBytes += n;
            readHead++;
            headOffset = 0;
            releaseReadLocked(i);
            freed++;
        }
        return freed;
    }

    private void appendSpillLocked(ByteBuffer src, int off, int n) {
        if (spill == null) {
            spill = new ArrayDeque<>();
        }
        while (n > 0) {
            if (spill.isEmpty() || spillTail == payloadCapacity) {
                spill.addLast(new byte[payloadCapacity]);
                spillTail = 0;
            }
            int k = Math.min(n, payloadCapacity - spillTail);
            src.get(off, spill.peekLast(), spillTail, k);
            spillTail += k;
            off += k;
            n -= k;
        }
    }

    /** Moves spilled bytes into {@code dst}, oldest first; returns how many. */
    private int readSpillLocked(ByteBuffer dst) {
        int total = 0;
        while (spillBytes > 0 && dst.hasRemaining()) {
            byte[] c = spill.peekFirst();
            int end = spill.size() == 1 ? spillTail : payloadCapacity;
            int n = Math.min(dst.remaining(), end - spillHead);
            dst.put(c, spillHead, n);
            spillHead += n;
            spillBytes -= n;
            total += n;
            if (spillHead == end) {
                spill.pollFirst();
                spillHead = 0;
                if (spill.isEmpty()) {
                    spillTail = 0;
                    respillBudget = 0;
                }
            }
        }
        engine.releaseSpill(total);
        return total;
    }

    private void dropSpillLocked() {
        engine.releaseSpill(spillBytes);
        spillBytes = 0;
        spill = null;
        spillHead = 0;
        spillTail = 0;
        respillBudget = 0;
    }

    /**
     * Client, at ESTABLISHED: checks the server's handshake (its accept's private data), sets up the credit window
     * from it, and opens the connection; then replays the frames that came first.
     */
    private void acceptServerHandshakeLocked(ByteBuffer pd) {
        ByteBuffer b = pd == null ? ByteBuffer.allocate(0) : pd.duplicate().order(FrameDescriptor.BYTE_ORDER);
        int off = b.position();
        int reason = HandshakeDescriptor.check(b, off, b.remaining(), slotSize);
        if (reason != HandshakeDescriptor.REASON_NONE) {
            engine.protocolErrors.incrementAndGet();
            failLocked(new ConnectException("rdmanio handshake with " + remote + " failed: the server's accept has "
                + HandshakeDescriptor.describe(reason, b, off, b.remaining(), slotSize)), false);
            return;
        }
        credit = new CreditWindow(dataSlots, controlSlots, HandshakeDescriptor.dataSlots(b, off),
            HandshakeDescriptor.controlSlots(b, off));
        state = OPEN;
        engine.connectionsOpened.incrementAndGet();
        Recorder.connectionOpened(engine.fabricName(), remote, client, System.nanoTime() - createdNanos);
        int n = earlyCount;
        earlyCount = 0;
        for (int k = 0; k < n && failure == null; k += 3) {
            onReceiveLocked(early[k], early[k + 1], early[k + 2]);
        }
        early = null;
    }

    private void onSendLocked(long low, int status) {
        long seq = sendCompleted + ((low - sendCompleted) & 0xffffffffL);
        if (seq >= sendPosted) {
            LOG.warn("completion for send {} of {} which posted only {}", seq, this, sendPosted);
            return;
        }
        byte kind = sendKind[(int) (seq % sendDepth)];
        // A signalled completion vouches for every earlier, unsignalled send.
        while (sendCompleted <= seq) {
            byte k = sendKind[(int) (sendCompleted % sendDepth)];
            if (k == KIND_CONTROL) {
                controlFreeSeq++;
            } else {
                if (k == KIND_DATA) {
                    freeSeq++;
                }
                dataInFlight--;
            }
            sendCompleted++;
        }
        if (status != Completions.SUCCESS) {
            if (status == Completions.WR_FLUSH_ERR) {
                // After the peer's FIN: the peer closed, and this send was that write into the void (a credit frame
                // flushed the same way is no write of the application's).
                wroteAfterPeerClose |= finReceived && kind == KIND_DATA;
                return;
            }
            if (status == Completions.RETRY_EXC_ERR && finReceived && kind == KIND_CONTROL
                && (finSeq < 0 || seq < finSeq)) {
                // The peer sent its FIN and went away before this end's credit grant reached it: it needs none,
                // and the stream it sent is complete, so reading it to its end must not fail.
                return;
            }
            if (status == Completions.RETRY_EXC_ERR) {
                // Nobody took it: the peer's process ended or its side of the connection failed (on a device, the
                // retries nobody acknowledged), and the fabric's disconnect may be reported a moment after this
                // completion. The kernel resets a TCP connection whose peer went away: a reset, as the
                // disconnect's judgement finds one with bytes outstanding, not a fabric status in the message.
                LOG.debug("a send to {} was not taken ({}): the peer is gone", remote,
                    Completions.statusName(status));
                boolean first = failure == null;
                failLocked(new IOException("Connection reset by peer"), false);
                failureIsReset |= first && failure != null;
                return;
            }
            if (status == Completions.RNR_RETRY_EXC_ERR) {
                engine.receiverNotReady.incrementAndGet();
            }
            failLocked(new IOException("send failed on the connection with " + remote + ": "
                + Completions.statusName(status)), false);
            return;
        }
        if (finSeq >= 0 && seq >= finSeq) {
            finCompleted = true;
            if (userClosed) {
                disconnectLocked();
            }
        }
        if (abortSeq >= 0 && seq >= abortSeq) {
            abortSeq = -1;
            disconnectLocked();
        }
    }

    void onEvent(CmEvent e) {
        boolean fire;
        boolean enqueue = false;
        boolean handshakeFailed;
        synchronized (lock) {
            if (tornDown) {
                return;
            }
            switch (e.type()) {
                case ESTABLISHED:
                    // The fabric connected the queue pairs: their posted receives are the fabric's until flushed.
                    connectedOnce = true;
                    if (state != CONNECTING || failure != null) {
                        break;
                    }
                    if (client) {
                        acceptServerHandshakeLocked(e.privateData());
                    } else {
                        state = OPEN;
                        engine.connectionsOpened.incrementAndGet();
                        Recorder.connectionOpened(engine.fabricName(), remote, client,
                            System.nanoTime() - createdNanos);
                        enqueue = !userClosed;
                    }
                    // Credit owed for frames that came before (the client may send as soon as it is established).
                    flushLocked();
                    break;
                case REJECTED: {
                    ByteBuffer pd = e.privateData();
                    String msg = pd == null || !pd.hasRemaining()
                        ? refusal(e.reason())
                        : HandshakeDescriptor.describeRejection(remote, pd.duplicate().order(
                            FrameDescriptor.BYTE_ORDER), request);
                    failLocked(new ConnectException(msg), false);
                    break;
                }
                case UNREACHABLE:
                    failLocked(new ConnectException("Connection refused: " + remote + " is unreachable"
                        + (e.reason() == null ? "" : ": " + e.reason())), false);
                    break;
                case DISCONNECTED:
                    disconnectSeen = true;
                    disconnectHint = true;
                    if (failure == null && !userClosed && e.reason() != null
                        && e.reason().startsWith(CmEvent.PROTOCOL_ERROR)) {
                        // The fabric caught the peer breaking its protocol: say what, at once.
                        protocolErrorLocked(e.reason().substring(CmEvent.PROTOCOL_ERROR.length()));
                    } else if (failure == null && !userClosed) {
                        if (state != OPEN) {
                            failLocked(new ConnectException("Connection refused: " + remote
                                + " closed the connection during the handshake"
                                + (e.reason() == null ? "" : " (" + e.reason() + ")")), false);
                        } else {
                            // Without a FIN, a reset unless the peer's process ended clean; after one, an orderly
                            // close unless the peer's RESET frame is among those still to be polled.
                            disconnectJudgementPending = true;
                            judgeDisconnectLocked();
                        }
                    }
                    break;
                default:
                    break;
            }
            // A disconnect ends what this side owed: nothing more can be posted.
            trackOwedLocked();
            handshakeFailed = listener != null && state == CONNECTING && failure != null;
            tryTeardownLocked();
            fire = updateReadinessLocked();
        }
        signalWaiters();
        if (fire) {
            fireReadiness();
        }
        if (enqueue && listener != null) {
            listener.enqueue(this);
        } else if (handshakeFailed) {
            listener.handshakeFailed(this);
        }
    }

    // -------------------------------------------------------------------------------------------------------------
    // Sending.

    /** Deferred work from the engine's flush queue: credit owed after reads, slots returned by loans. */
    void flush() {
        boolean fire;
        boolean aborted = false;
        synchronized (lock) {
            if (abortOnData && failure == null && !tornDown) {
                abortOnData = false;
                abortLocked();
                aborted = true;
            }
            flushLocked();
            fire = updateReadinessLocked();
        }
        if (aborted) {
            wakeAll();
        } else {
            signalWaiters();
        }
        if (fire || aborted) {
            fireReadiness();
        }
    }

    /**
     * Posts what credit allows (staged data, then FIN, then a CREDIT frame if one is due), then tells the engine
     * whether this connection still owes the peer bytes or a FIN that wait for credit.
     */
    private void flushLocked() {
        postFramesLocked();
        trackOwedLocked();
        publishStandingLocked();
    }

    /**
     * Tells the queue pair how this side's stream stands, for a peer that outlives this process
     * ({@link QueuePair#publishStanding}): the bytes the application took (read, lent, or urgent bytes dropped
     * unread) while the connection is open, not closing, and every byte a write accepted has been posted;
     * otherwise none. Should this process end without closing, a fabric that shows it lets the peer read end of
     * stream where the kernel would have sent TCP's FIN, and a reset where it would have reset (bytes unread here,
     * or bytes accepted and never sent).
     */
    /** The listener handed this connection to the application ({@link FabricListener#accept}). */
    void acceptedByApplication() {
        synchronized (lock) {
            if (unaccepted) {
                unaccepted = false;
                publishStandingLocked();
            }
        }
    }

    @Override
    public void blockingWrite(boolean underWay) {
        synchronized (lock) {
            blockingWriteFrom = underWay ? fillSeq : -1;
            publishStandingLocked();
        }
    }

    private void publishStandingLocked() {
        if (qp == null) {
            return;
        }
        // Every frame a returned write filled has been posted: those a blocking write under way filled since it
        // began may still be staged (its bytes were not accepted yet, in TCP's terms).
        boolean sent = postSeq == fillSeq || (blockingWriteFrom >= 0 && postSeq >= blockingWriteFrom);
        boolean clean = state == OPEN && !unaccepted && failure == null && !userClosed && !abortOnData
            && !disconnectCalled && !disconnectSeen && !tornDown && sent && (!finPending || finPosted);
        long standing = clean ? bytesRead + urgentDropped : -1;
        if (standing != publishedStanding) {
            publishedStanding = standing;
            qp.publishStanding(standing);
        }
    }

    /**
     * Bytes a write accepted (or a FIN) wait for credit: the engine's closer makes sure some thread drives progress
     * when that credit arrives, even if the application never touches this engine again (see
     * {@link FabricEngine#beginOwing}).
     */
    private void trackOwedLocked() {
        boolean now = !tornDown && failure == null && !disconnectCalled && !disconnectSeen
            && (postSeq < fillSeq || (finPending && !finPosted));
        if (now != owing) {
            owing = now;
            if (now) {
                engine.beginOwing();
            } else {
                engine.endOwing();
            }
        }
    }

    private void postFramesLocked() {
        if (!canPostLocked()) {
            return;
        }
        long before = postSeq;
        while (postSeq < fillSeq && credit.canSendData() && dataInFlight < stagingCount) {
            if (postSeq == fillSeq - 1 && holdLastFrameLocked()) {
                break;
            }
            if (!postDataLocked()) {
                return;
            }
        }
        if (finPending && !finPosted && postSeq == fillSeq && credit.canSendControl() && controlFree() > 0) {
            if (!postControlLocked(TYPE_FIN)) {
                return;
            }
            before = -1;
        }
        if (lingering && postSeq != before) {
            // A closed connection that delivers is not stuck: its linger bound runs from its last progress.
            lingerDeadline = System.nanoTime() + engine.lingerNanos;
        }
        if (controlFree() > 0 && credit.creditDue(false) != CreditWindow.NONE) {
            postControlLocked(TYPE_CREDIT);
        }
    }

    /** How many of the buffers have bytes, counting to two at most. */
    private static int buffersWithBytes(ByteBuffer[] srcs, int offset, int length) {
        int n = 0;
        for (int k = offset; k < offset + length && n < 2; k++) {
            if (srcs[k].hasRemaining()) {
                n++;
            }
        }
        return n;
    }

    /**
     * Whether the peer's window is down to its last quarter of frames: a reader that has not read for a while (or
     * not yet). Small writes then gather into one frame ({@link #holdLastFrameLocked}) instead of taking a frame
     * each.
     */
    private boolean windowLowLocked() {
        return credit.dataCredit() <= Math.max(1, credit.peerDataSlots() / 4);
    }

    /**
     * Whether the last staged frame, partly filled by small writes, is held back a moment for more to join it: only
     * while the peer's window is low ({@link #windowLowLocked}), for at most {@link #HOLD_NANOS} (then any progress,
     * the engine's closer if the application drives none, posts it), never once a FIN or an urgent byte waits
     * behind it. The kernel's receive buffer, counted in bytes, holds thousands of small segments for a reader that
     * does not read; the peer's ring, counted in frames, would stop a sender of small writes after a frame each
     * (TCP's reader then reads them all in one call; here it would read a ring's worth of frames, then the rest as
     * the window reopened). Nothing is held while the window is open, so a round trip is not delayed.
     */
    private boolean holdLastFrameLocked() {
        int last = (int) ((fillSeq - 1) % stagingCount);
        if (!smallTail || finPending || userClosed || stagingUrgent[last] || blockingWriteFrom >= 0
            || stagingLen[last] >= frameCapLocked(fillSeq - 1, true) || !windowLowLocked()) {
            holdSince = 0;
            return false;
        }
        long now = System.nanoTime();
        if (holdSince == 0) {
            holdSince = now == 0 ? 1 : now;
            engine.beginHold(this);
            return true;
        }
        if (now - holdSince >= HOLD_NANOS) {
            holdSince = 0;
            return false;
        }
        return true;
    }

    /**
     * The payload a staged frame of small writes may take: while the peer's window is low and this frame is the next
     * to leave, what the peer's last unread frame has room for if it read nothing since ({@link #peerTailFill}), so
     * that the peer packs this frame onto that one whole; otherwise a full frame. A reader that did read loses
     * nothing but a frame's fill; one that did not gets its ring's bytes' worth, not half of it.
     */
    private int frameCapLocked(long seq, boolean small) {
        if (small && seq == postSeq && peerTailFill > 0 && peerTailFill < payloadCapacity && windowLowLocked()) {
            return payloadCapacity - peerTailFill;
        }
        return payloadCapacity;
    }

    /** A data frame of {@code length} bytes left: the peer's last unread frame's fill, as it packs if it reads nothing. */
    private void noteFrameSentLocked(int length) {
        peerTailFill = peerTailFill + length <= payloadCapacity ? peerTailFill + length : length;
    }

    /** How long a frame of small writes is held for more to join it while the peer's window is low. */
    static final long HOLD_NANOS = 200_000;

    /**
     * Posts the held frame if its time is up (by the engine's progress); whether one is still held. Not under the
     * engine's hold list's lock.
     */
    boolean releaseHold() {
        boolean fire;
        boolean held;
        synchronized (lock) {
            if (holdSince == 0) {
                return false;
            }
            flushLocked();
            held = holdSince != 0 && postSeq < fillSeq && canPostLocked();
            if (!held) {
                holdSince = 0;
            }
            fire = updateReadinessLocked();
        }
        if (fire) {
            fireReadiness();
        }
        return held;
    }

    private boolean canPostLocked() {
        return state == OPEN && failure == null && !disconnectCalled && !disconnectSeen && !tornDown;
    }

    private int controlFree() {
        return controlEntries - (int) (controlPostSeq - controlFreeSeq);
    }

    /** Whether every staging slot holds a frame waiting for credit: a peer that does not read took all (for tests). */
    boolean isStagingFull() {
        synchronized (lock) {
            return fillSeq - postSeq == stagingCount;
        }
    }

    private int stagingFree() {
        return stagingCount - (int) (fillSeq - freeSeq);
    }

    private boolean postDataLocked() {
        int idx = (int) (postSeq % stagingCount);
        int slot = stagingIds[idx];
        ByteBuffer buf = pool.buffer(slot);
        int off = pool.offset(slot);
        int length = stagingLen[idx];
        credit.onSend(TYPE_DATA);
        FrameDescriptor.writeHeader(buf, off, TYPE_DATA, stagingUrgent[idx] ? FrameDescriptor.FLAG_URGENT : 0, length,
            credit.dataGranted(), credit.controlGranted());
        postSeq++;
        // The last free staging slot, or the send queue's last data entry, is gone: only a signalled completion
        // can give them back.
        boolean signal = stagingFree() == 0 || dataInFlight + 1 >= stagingCount;
        if (!postSendLocked(KIND_DATA, slot, off, HEADER_LENGTH + length, signal)) {
            return false;
        }
        engine.bytesSent.addAndGet(length);
        noteFrameSentLocked(length);
        engine.framesSent.incrementAndGet();
        return true;
    }

    private boolean postControlLocked(int type) {
        return postControlLocked(type, false, 0);
    }

    private boolean postControlLocked(int type, boolean forceSignal, int flags) {
        int entry = (int) (controlPostSeq % controlEntries);
        ByteBuffer buf = pool.buffer(controlSlotId);
        int off = pool.offset(controlSlotId) + entry * CONTROL_ENTRY;
        int payload = 0;
        credit.onSend(type);
        FrameDescriptor.writeHeader(buf, off, type, flags, payload, credit.dataGranted(), credit.controlGranted());
        controlPostSeq++;
        boolean signal = forceSignal || type == TYPE_FIN || controlFree() == 0;
        if (!postSendLocked(KIND_CONTROL, controlSlotId, off, HEADER_LENGTH + payload, signal)) {
            return false;
        }
        engine.framesSent.incrementAndGet();
        if (type == TYPE_CREDIT) {
            engine.creditFramesSent.incrementAndGet();
        } else if (type == TYPE_FIN) {
            finPosted = true;
            finSeq = sendPosted - 1;
        }
        return true;
    }

    private boolean postSendLocked(byte kind, int slot, int off, int length, boolean signal) {
        int flags = beginSendLocked(kind, signal);
        try {
            qp.postSend(SEND_TAG | (sendPosted & 0xffffffffL), pool.region(slot), off, length, flags);
        } catch (IOException e) {
            return sendFailedLocked(e);
        }
        endSendLocked(kind);
        return true;
    }

    /**
     * Sends one frame inline, straight from {@code src}, when nothing staged waits ahead of it and credit and the
     * send queue allow; the bytes sent (then taken from {@code src}), 0 when it cannot, -1 when the post failed
     * (the connection has failed: nothing more is staged for it).
     */
    private int sendInlineLocked(ByteBuffer src) {
        if (inlineLimit == 0 || postSeq != fillSeq || !credit.canSendData() || dataInFlight >= stagingCount
            || !canPostLocked()) {
            return 0;
        }
        int n = Math.min(src.remaining(), payloadCapacity);
        int pos = src.position();
        credit.onSend(TYPE_DATA);
        FrameDescriptor.writeHeader(inlineHeader, 0, TYPE_DATA, n, credit.dataGranted(), credit.controlGranted());
        int flags = beginSendLocked(KIND_INLINE, dataInFlight + 1 >= stagingCount);
        try {
            qp.postSendInline(SEND_TAG | (sendPosted & 0xffffffffL), inlineHeader, 0, HEADER_LENGTH, src, pos, n,
                flags);
        } catch (IOException e) {
            sendFailedLocked(e);
            return -1;
        }
        endSendLocked(KIND_INLINE);
        src.position(pos + n);
        engine.bytesSent.addAndGet(n);
        noteFrameSentLocked(n);
        engine.framesSent.incrementAndGet();
        engine.inlineFramesSent.incrementAndGet();
        return n;
    }

    /** The flags of the send about to be posted: signalled when asked, every signalInterval, or near full. */
    private int beginSendLocked(byte kind, boolean signal) {
        sendKind[(int) (sendPosted % sendDepth)] = kind;
        if (signal || ++unsignalledRun >= signalInterval || sendPosted - sendCompleted + 1 >= sendDepth) {
            unsignalledRun = 0;
            return QueuePair.SIGNALED;
        }
        return 0;
    }

    private void endSendLocked(byte kind) {
        sendPosted++;
        if (kind != KIND_CONTROL) {
            dataInFlight++;
        }
    }

    private boolean sendFailedLocked(IOException e) {
        if (!qp.isError()) {
            failLocked(new IOException("posting a send to " + remote + " failed: " + e.getMessage(), e), false);
        }
        return false;
    }

    private void postRecvLocked(int i) {
        int slot = recvIds[i];
        try {
            qp.postRecv(RECV_TAG | i, pool.region(slot), pool.offset(slot), slotSize);
            postedRecvs++;
        } catch (IOException e) {
            // A queue pair in error is explained by the DISCONNECTED event that follows; that names the cause.
            if (!disconnectSeen && !disconnectCalled && !qp.isError()) {
                failLocked(new IOException("posting a receive for " + remote + " failed: " + e.getMessage(), e),
                    false);
            }
        }
    }

    private void repostDataLocked(int i) {
        postRecvLocked(i);
        credit.dataSlotsFreed(1);
    }

    /**
     * {@inheritDoc}
     *
     * <p>When not every byte fits, the engine's progress is driven once and the rest tried again before the write
     * gives up: send completions free staging slots and returned credit sits in the completion queue until someone
     * polls it, and a write must not report a full window that is not (a program polling without a selector would
     * otherwise stall).
     */
    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return write(srcs, offset, length, true);
    }

    /**
     * A blocking writer's write: when it has a slot or more to write (or the rest of such a write), bytes that find
     * no credit wait for it, polling up to the engine's spin budget, and go straight from {@code srcs} into the
     * peer's receive slots when it comes, instead of being copied into staging first and from there again. Returns
     * as soon as bytes were taken; once the budget is spent without credit (a peer that does not read) the rest is
     * staged as {@link #write} does. A stream whose reader keeps up thus costs two copies per byte, not three, and
     * the tail of each large write does not become a frame of its own. Smaller writes are staged at once, where
     * they coalesce.
     *
     * <p>This wait keeps its budget when {@link SpinWait} finds the processors crowded: the writer is waiting for a
     * reader that is running, not for a thread to be woken, and staging instead (a third copy) made the quiet
     * stream slower (4.2-6.6 GB/s held against 2.5-3.3 staged, same session).
     */
    @Override
    public long writeDirect(ByteBuffer[] srcs, int offset, int length) throws IOException {
        long spin = engine.spinNanos();
        // Only where whole frames go inline: without, every frame is staged anyway and waiting gains nothing.
        boolean hold = spin > 0 && inlineLimit > 0
            && (directRest || remaining(srcs, offset, length) >= payloadCapacity);
        directRest = false;
        if (!hold) {
            return write(srcs, offset, length, true);
        }
        long n = write(srcs, offset, length, false);
        long deadline = System.nanoTime() + spin;
        for (int round = 0; n == 0 && System.nanoTime() - deadline < 0; round++) {
            if (Thread.currentThread().isInterrupted()) {
                return 0;
            }
            SpinWait.pause(round);
            n = write(srcs, offset, length, false);
        }
        if (n == 0) {
            return write(srcs, offset, length, true);
        }
        directRest = hasRemaining(srcs, offset, length);
        return n;
    }

    /** When this connection was made (its setup began), in {@link System#nanoTime()}'s time. */
    long createdNanos() {
        return createdNanos;
    }

    /** Whether this accepted connection's handshake is still under way (for the listener's accept queue). */
    boolean isHandshaking() {
        synchronized (lock) {
            return state == CONNECTING && failure == null && !tornDown && !userClosed;
        }
    }

    @Override
    public int sendBufferSize() {
        return (int) Math.min(Integer.MAX_VALUE, (long) stagingCount * slotSize);
    }

    private long write(ByteBuffer[] srcs, int offset, int length, boolean stage) throws IOException {
        if (finHint && !disconnectHint) {
            // A write after the peer's FIN: its disconnect, if it closed, may wait unpolled; whether this write
            // reaches a closed socket (accepted, but the next fails) or an open one depends on it.
            engine.progressIfNotInside();
        }
        awaitDisconnectJudgement();
        long total = writeOnce(srcs, offset, length, false, stage, true);
        if (hasRemaining(srcs, offset, length) && engine.progress() > 0) {
            // That progress may have handled the peer's DISCONNECTED: judged before this write can report it.
            awaitDisconnectJudgement();
            try {
                total += writeOnce(srcs, offset, length, total == 0 && stage, stage, total == 0);
            } catch (IOException e) {
                if (total == 0) {
                    throw e;
                }
                // Bytes were taken: report them; the failure is sticky and the next write throws it.
            }
        } else if (stage && total == 0 && hasRemaining(srcs, offset, length)) {
            noteStall();
        }
        return total;
    }

    /**
     * The peer is gone; whether it closed in order (its FIN among the receives not yet polled: TCP accepts the
     * first write after it) or reset is known once they are. The fabric flushes them once it has seen the
     * disconnect, which a device may do a moment after the event (DISCONNECTED can be polled first, by the closer
     * while nobody waits, or by the progress a write drives itself): a bounded wait, after which a write fails as a
     * plain broken pipe.
     */
    private void awaitDisconnectJudgement() {
        if (!disconnectHint || !judgementPending()) {
            return;
        }
        long deadline = System.nanoTime() + JUDGEMENT_WAIT_NANOS;
        do {
            engine.progressIfNotInside();
            if (!judgementPending()) {
                break;
            }
            Thread.yield();
        } while (System.nanoTime() - deadline < 0);
    }

    private void noteStall() {
        synchronized (lock) {
            if ((lastReady & Readiness.WRITE) == 0) {
                writeBlocked = true;
            }
        }
        engine.creditStalls.incrementAndGet();
        Recorder.creditStall(engine.fabricName(), remote);
    }

    /**
     * One attempt; a stall (nothing taken) is counted when {@code last}. Without {@code stage}, bytes that find no
     * credit stay in {@code srcs} (see {@link #writeDirect}). Without {@code report}, a failure ends the attempt
     * with nothing taken instead of being thrown.
     */
    private long writeOnce(ByteBuffer[] srcs, int offset, int length, boolean last, boolean stage, boolean report)
            throws IOException {
        boolean fire;
        long total = 0;
        synchronized (lock) {
            if (tryDropWriteAfterPeerCloseLocked()) {
                return dropAll(srcs, offset, length);
            }
            if (!report && failure != null) {
                // This call took bytes already: it returns their count, and the failure is the next call's to
                // report (reporting a reset decides what later reads see, so it is never made and dropped).
                return 0;
            }
            ensureWritableLocked();
            boolean postFailed = false;
            boolean small = remaining(srcs, offset, length) < payloadCapacity;
            // A small write goes into one frame: staged (a copy) when it gathers several buffers, as writev makes
            // one segment of them, or when the peer's window is low (see holdLastFrameLocked); else inline.
            boolean staged = small && (windowLowLocked() || buffersWithBytes(srcs, offset, length) > 1);
            outer:
            for (int k = offset; k < offset + length; k++) {
                ByteBuffer src = srcs[k];
                while (src.hasRemaining()) {
                    int n = staged ? 0 : sendInlineLocked(src);
                    postFailed |= n < 0;
                    if (n == 0 && stage) {
                        n = stageLocked(src, small);
                    }
                    if (n <= 0) {
                        break outer;
                    }
                    total += n;
                }
            }
            if (total == 0 && postFailed && qp.isError() && tryDropFirstWriteAfterFinLocked()) {
                // The peer closed in order and is already gone (its queue pair took ours to error before the
                // DISCONNECTED event came): as TCP, the first write after its FIN is accepted and goes nowhere.
                total = dropAll(srcs, offset, length);
            }
            appBytes += total;
            bytesWritten += total;
            if (total > 0 && finReceived) {
                sentAfterFin = true;
            }
            flushLocked();
            if (last && total == 0 && hasRemaining(srcs, offset, length)) {
                writeBlocked = true;
                engine.creditStalls.incrementAndGet();
                Recorder.creditStall(engine.fabricName(), remote);
            }
            fire = updateReadinessLocked();
        }
        if (fire) {
            fireReadiness();
        }
        return total;
    }

    /** Takes every byte of {@code srcs} for nowhere (a write TCP accepts for a peer that is gone); their count. */
    private static long dropAll(ByteBuffer[] srcs, int offset, int length) {
        long total = 0;
        for (int k = offset; k < offset + length; k++) {
            total += srcs[k].remaining();
            srcs[k].position(srcs[k].limit());
        }
        return total;
    }

    private static long remaining(ByteBuffer[] srcs, int offset, int length) {
        long n = 0;
        for (int k = offset; k < offset + length; k++) {
            n += srcs[k].remaining();
        }
        return n;
    }

    private static boolean hasRemaining(ByteBuffer[] srcs, int offset, int length) {
        for (int k = offset; k < offset + length; k++) {
            if (srcs[k].hasRemaining()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether this write is the first after the peer closed in order (its FIN read, then DISCONNECTED), which TCP
     * accepts: the bytes reach a closed socket and are dropped, and only the reset they provoke fails the next
     * write. An orderly close must not surface as an error where TCP is silent.
     */
    private boolean tryDropWriteAfterPeerCloseLocked() {
        return disconnectSeen && tryDropFirstWriteAfterFinLocked();
    }

    /** Whether this write is the first after the peer's FIN (read, DISCONNECTED or not), which TCP accepts. */
    private boolean tryDropFirstWriteAfterFinLocked() {
        if (!finReceived || wroteAfterPeerClose || failure != null || userClosed || outputShutdown || state != OPEN) {
            return false;
        }
        wroteAfterPeerClose = true;
        return true;
    }

    private void ensureWritableLocked() throws IOException {
        if (failure != null) {
            throw writeFailureLocked();
        }
        if (userClosed) {
            throw new IOException("connection closed");
        }
        if (state != OPEN) {
            throw new IOException("not connected");
        }
        if (outputShutdown) {
            throw new IOException("Broken pipe: output was shut down");
        }
        if (disconnectSeen) {
            // The peer closed and a write already went to it: TCP's EPIPE after the reset that write provoked.
            throw new IOException("Broken pipe");
        }
    }

    /**
     * Copies what fits into the current unsent slot or a new one; 0 when staging is full. {@code small}: the bytes
     * come from a write smaller than a frame (see {@link #holdLastFrameLocked}).
     */
    private int stageLocked(ByteBuffer src, boolean small) {
        int idx;
        if (lastUnsentHasRoomLocked() && stagingLen[(int) ((fillSeq - 1) % stagingCount)]
                < frameCapLocked(fillSeq - 1, small && smallTail)) {
            idx = (int) ((fillSeq - 1) % stagingCount);
            smallTail &= small;
        } else if (stagingFree() > 0) {
            idx = (int) (fillSeq % stagingCount);
            stagingLen[idx] = 0;
            stagingUrgent[idx] = false;
            fillSeq++;
            smallTail = small;
        } else {
            return 0;
        }
        int slot = stagingIds[idx];
        int n = Math.min(src.remaining(), frameCapLocked(fillSeq - 1, smallTail) - stagingLen[idx]);
        int pos = src.position();
        pool.buffer(slot).put(pool.offset(slot) + HEADER_LENGTH + stagingLen[idx], src, pos, n);
        src.position(pos + n);
        stagingLen[idx] += n;
        return n;
    }

    private boolean stagingRoomLocked() {
        return stagingFree() > 0 || lastUnsentHasRoomLocked();
    }

    /** Whether the last staged frame is still unsent and takes more bytes (an urgent byte's frame takes none). */
    private boolean lastUnsentHasRoomLocked() {
        int last = (int) ((fillSeq - 1) % stagingCount);
        return fillSeq > postSeq && stagingLen[last] < payloadCapacity && !stagingUrgent[last];
    }

    /**
     * {@inheritDoc}
     *
     * <p>The byte is staged as a frame of its own behind the bytes written before it, flagged urgent, and waits
     * for credit as they do. As {@link #write}, the engine's progress is driven once before giving up for lack of
     * a staging slot.
     */
    @Override
    public int writeUrgent(ByteBuffer src) throws IOException {
        awaitDisconnectJudgement();
        int n = urgentOnce(src, false);
        if (n == 0 && engine.progress() > 0) {
            awaitDisconnectJudgement();
            n = urgentOnce(src, true);
        }
        return n;
    }

    private int urgentOnce(ByteBuffer src, boolean last) throws IOException {
        boolean fire;
        int n = 0;
        synchronized (lock) {
            if (tryDropWriteAfterPeerCloseLocked()) {
                src.position(src.position() + 1);
                return 1;
            }
            ensureWritableLocked();
            if (stagingFree() > 0) {
                int idx = (int) (fillSeq % stagingCount);
                int slot = stagingIds[idx];
                pool.buffer(slot).put(pool.offset(slot) + HEADER_LENGTH, src.get(src.position()));
                src.position(src.position() + 1);
                stagingLen[idx] = 1;
                stagingUrgent[idx] = true;
                fillSeq++;
                n = 1;
                appBytes += 1;
                bytesWritten += 1;
            } else if (last) {
                writeBlocked = true;
                engine.creditStalls.incrementAndGet();
            }
            flushLocked();
            fire = updateReadinessLocked();
        }
        if (fire) {
            fireReadiness();
        }
        return n;
    }

    @Override
    public void setOobInline(boolean on) {
        this.oobInline = on;
    }

    @Override
    public void shutdownOutput() throws IOException {
        boolean fire;
        synchronized (lock) {
            if (outputShutdown) {
                return;
            }
            if (failure != null) {
                // As on a TCP socket after a reset: nothing is left to shut down, and that is not an error.
                outputShutdown = true;
                return;
            }
            if (state != OPEN) {
                throw new IOException("not connected");
            }
            outputShutdown = true;
            finPending = true;
            flushLocked();
            fire = updateReadinessLocked();
        }
        // A writer blocked for credit on another thread returns now with what it wrote (as TCP's shutdown does).
        wakeAll();
        if (fire) {
            fireReadiness();
        }
    }

    // -------------------------------------------------------------------------------------------------------------
    // Receiving.

    /**
     * {@inheritDoc}
     *
     * <p>A read that finds nothing drives the engine's progress once and looks again, so that a program polling
     * non-blocking channels without a selector sees bytes arrive (a poll of the completion queues: memory reads on
     * the software fabrics, {@code ibv_poll_cq} on verbs; no system call when nothing is due).
     */
    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        long n = readOnce(dsts, offset, length);
        if (n == 0) {
            if (engine.progress() > 0) {
                n = readOnce(dsts, offset, length);
            }
        } else if (n > 0 && hasRemaining(dsts, offset, length) && engine.progress() > 0 && hasBytesToRead()) {
            // Room left: frames that arrived since the last poll are read too, as a TCP read takes every byte
            // the socket has received (a reader that waited, then reads once, gets all that was sent). Only
            // bytes: an end of stream or a reset behind them is for the next read.
            long more = readOnce(dsts, offset, length);
            if (more > 0) {
                n += more;
            }
        }
        return n;
    }

    private boolean hasBytesToRead() {
        synchronized (lock) {
            return available > 0 && !inputShutdown;
        }
    }

    private long readOnce(ByteBuffer[] dsts, int offset, int length) throws IOException {
        long total = 0;
        boolean creditDue = false;
        synchronized (lock) {
            if (inputShutdown) {
                return -1;
            }
            if (available == 0) {
                if (resetAfterFin) {
                    return -1;
                }
                // Bytes that arrived before a reset are read first, as from a TCP socket's receive queue.
                if (failure != null) {
                    IOException e = readFailureLocked();
                    if (e == null) {
                        return -1;
                    }
                    throw e;
                }
                if (finReceived) {
                    return -1;
                }
                if (state != OPEN && userClosed) {
                    throw new IOException("connection closed");
                }
                return 0;
            }
            int freed = 0;
            if (spillBytes > 0) {
                for (int k = offset; k < offset + length && spillBytes > 0; k++) {
                    int n = readSpillLocked(dsts[k]);
                    total += n;
                    available -= n;
                }
                if (spillBytes > 0) {
                    // Every buffer is full: the ring's frames still come after the spill's bytes.
                    freed = respillLocked();
                }
            }
            outer:
            for (int k = offset; k < offset + length; k++) {
                ByteBuffer dst = dsts[k];
                while (dst.hasRemaining()) {
                    if (readHead == readTail) {
                        break outer;
                    }
                    int i = readQueue[(int) (readHead % recvCount)];
                    int slot = recvIds[i];
                    int n = Math.min(dst.remaining(), recvLen[i] - headOffset);
                    int pos = dst.position();
                    dst.put(pos, pool.buffer(slot), pool.offset(slot) + HEADER_LENGTH + headOffset, n);
                    dst.position(pos + n);
                    headOffset += n;
                    total += n;
                    available -= n;
                    if (headOffset == recvLen[i]) {
                        readHead++;
                        headOffset = 0;
                        releaseReadLocked(i);
                        freed++;
                    }
                }
            }
            appBytes += total;
            bytesRead += total;
            publishStandingLocked();
            creditDue = freed > 0 && failure == null && !tornDown
                && credit.unadvertisedData() >= credit.creditThreshold();
            lastReady = readyOpsLocked();
        }
        if (creditDue) {
            // Deferred to progress, so that a write the application makes next can carry the grants instead.
            engine.requestFlush(this);
        }
        return total;
    }

    @Override
    public ByteBuf readBuffer() throws IOException {
        ByteBuf b = readBufferOnce();
        if (b == null && engine.progress() > 0) {
            // As read: progress never depends on a selector.
            b = readBufferOnce();
        }
        return b;
    }

    private ByteBuf readBufferOnce() throws IOException {
        synchronized (lock) {
            if (inputShutdown) {
                return END_OF_STREAM;
            }
            if (spillBytes > 0) {
                ByteBuffer b = ByteBuffer.allocate((int) Math.min(spillBytes, payloadCapacity));
                int n = readSpillLocked(b);
                available -= n;
                bytesRead += n;
                publishStandingLocked();
                lastReady = readyOpsLocked();
                return Unpooled.wrappedBuffer(b.flip());
            }
            if (readHead == readTail) {
                if (failure != null) {
                    IOException e = readFailureLocked();
                    if (e == null) {
                        return END_OF_STREAM;
                    }
                    throw e;
                }
                return finReceived ? END_OF_STREAM : null;
            }
            int i = readQueue[(int) (readHead++ % recvCount)];
            int from = headOffset;
            int n = recvLen[i] - from;
            headOffset = 0;
            available -= n;
            bytesRead += n;
            publishStandingLocked();
            if (lent == null) {
                lent = new LentByteBuf[recvCount];
            }
            LentByteBuf b = lent[i];
            if (b == null) {
                int slot = recvIds[i];
                ByteBuffer payload = pool.buffer(slot).duplicate();
                payload.limit(pool.offset(slot) + slotSize).position(pool.offset(slot) + HEADER_LENGTH);
                b = new LentByteBuf(this::returned, i, payload.slice());
                lent[i] = b;
            }
            lentOut[i] = true;
            lastReady = readyOpsLocked();
            return b.lend(from, n);
        }
    }

    /** A loan ended (any thread): repost the slot, or free it if the connection is gone. */
    private void returned(LentByteBuf b) {
        boolean creditDue = false;
        synchronized (lock) {
            int i = b.slot();
            lentOut[i] = false;
            if (tornDown) {
                pool.free(recvIds[i]);
                return;
            }
            if (failure == null && !disconnectCalled && !disconnectSeen) {
                repostDataLocked(i);
                creditDue = credit.unadvertisedData() >= credit.creditThreshold();
            }
        }
        if (creditDue) {
            engine.requestFlush(this);
        }
    }

    @Override
    public void shutdownInput() throws IOException {
        synchronized (lock) {
            if (inputShutdown) {
                return;
            }
            inputShutdown = true;
        }
        // The flush wakes a blocked reader (it reads -1 now) and tells the selectors.
        engine.requestFlush(this);
    }

    /** Drops unread frames; their slots are reposted when {@code repost} (credit still returns). */
    private void discardQueuedLocked(boolean repost) {
        while (readHead != readTail) {
            int i = readQueue[(int) (readHead++ % recvCount)];
            if (tornDown) {
                pool.free(recvIds[i]);
            } else if (repost && failure == null && credit != null) {
                repostDataLocked(i);
            }
        }
        headOffset = 0;
        available = 0;
        dropSpillLocked();
    }

    /**
     * A queued frame was read to its end: its slot is reposted while the connection lives, kept for the teardown
     * after a failure, and freed when the teardown has already run (it kept the slot for this read).
     */
    private void releaseReadLocked(int i) {
        if (tornDown) {
            pool.free(recvIds[i]);
        } else if (failure == null) {
            repostDataLocked(i);
        }
    }

    // -------------------------------------------------------------------------------------------------------------
    // Failure, close and teardown.

    private void protocolErrorLocked(String what) {
        failLocked(new ProtocolException("protocol error from " + remote + ": " + what), true);
    }

    private static final int RESET_BY_READ = 1;
    private static final int RESET_BY_WRITE = 2;

    /** What a read reports of the failure, {@code null} for end of stream (see {@link #failureIsReset}). */
    private IOException readFailureLocked() {
        if (!failureIsReset) {
            return failure;
        }
        if (resetReport == RESET_BY_WRITE) {
            return null;
        }
        resetReport = RESET_BY_READ;
        return new SocketException("Connection reset");
    }

    /** What a write reports of the failure (see {@link #failureIsReset}). */
    private IOException writeFailureLocked() {
        if (resetAfterFin) {
            return new IOException("Broken pipe");
        }
        if (!failureIsReset) {
            return failure;
        }
        if (resetReport == 0) {
            resetReport = RESET_BY_WRITE;
            return new IOException("Connection reset by peer");
        }
        return new IOException("Broken pipe");
    }

    /** Makes {@code e} this connection's sticky failure and starts teardown. */
    private void failLocked(IOException e, boolean protocol) {
        if (failure != null || tornDown) {
            return;
        }
        failure = e;
        engine.connectionsFailed.incrementAndGet();
        if (protocol) {
            engine.protocolErrors.incrementAndGet();
        }
        Recorder.connectionFailed(engine.fabricName(), remote, e.getMessage(), protocol);
        LOG.debug("connection with {} failed", remote, e);
        publishStandingLocked();
        // Frames already queued stay readable: the failure is reported once they have been read (or on close).
        disconnectLocked();
        trackOwedLocked();
        lingerLocked();
    }

    /** Asks the engine to keep driving progress until this connection is torn down. */
    private void lingerLocked() {
        if (!tornDown && !lingering) {
            lingering = true;
            lingerDeadline = System.nanoTime() + (finAfterConnect
                ? Math.min(engine.lingerNanos, PENDING_CONNECT_GRACE_NANOS) : engine.lingerNanos);
            engine.beginLinger(this);
        }
    }

    /** The linger deadline ({@link Long#MAX_VALUE} once torn down or when nothing is left to deliver). */
    long lingerDeadline() {
        synchronized (lock) {
            return tornDown || !lingering ? Long.MAX_VALUE : lingerDeadline;
        }
    }

    /** This connection's row of the engine's table. */
    ConnectionInfo info() {
        InetSocketAddress local;
        try {
            local = id.localAddress();
        } catch (RuntimeException e) {
            local = null;
        }
        synchronized (lock) {
            StringBuilder st = new StringBuilder(switch (state) {
                case CONNECTING -> "connecting";
                case OPEN -> "open";
                default -> "closed";
            });
            if (failure != null) {
                st.append(", failed: ").append(failure.getMessage());
            } else {
                if (userClosed) {
                    st.append(tornDown ? "" : ", delivering");
                }
                if (outputShutdown && !userClosed) {
                    st.append(", output shut down");
                }
                if (inputShutdown && !userClosed) {
                    st.append(", input shut down");
                }
                if (finReceived) {
                    st.append(", peer closed");
                }
            }
            return new ConnectionInfo(engine.fabricName(), local, remote, client, st.toString(), bytesWritten,
                bytesRead, credit == null ? 0 : Math.max(0, credit.dataCredit()), fillSeq - postSeq,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - createdNanos));
        }
    }

    /** Bytes the application has written and read so far (for the exit hook, which closes idle connections). */
    long appBytes() {
        synchronized (lock) {
            return appBytes;
        }
    }

    /** Registered memory this connection holds until it is torn down. */
    long lingerFootprint() {
        return (long) (recvCount + stagingCount + 1) * slotSize;
    }

    /**
     * The engine gives up on this lingering connection: the peer is reset (it reads what had arrived, then
     * "connection reset") and everything is freed at once. False when it was torn down meanwhile.
     */
    boolean expireLinger(String why) {
        synchronized (lock) {
            if (tornDown) {
                return false;
            }
            LOG.debug("closed connection with {} reset: {} ({})", remote, why, creditStateLocked());
            if (failure == null) {
                failure = new IOException("connection with " + remote + " reset after close: " + why);
            }
            if (userClosed) {
                discardQueuedLocked(false);
            }
            // Else a failed connection its application has not closed: what it received stays readable.
            disconnectLocked();
            teardownQuietlyLocked();
        }
        wakeAll();
        fireReadiness();
        return true;
    }

    /**
     * Whether nothing written is left to deliver: the FIN after the last byte completed, or the connection
     * failed, was torn down, or never opened, or the peer is gone.
     */
    boolean isOutputDone() {
        synchronized (lock) {
            if (finAfterConnect && state == CONNECTING && failure == null && !tornDown && !disconnectSeen) {
                return false;
            }
            return finCompleted || tornDown || failure != null || state != OPEN || disconnectSeen;
        }
    }

    @Override
    public boolean awaitClosed(long timeoutNanos) {
        return engine.awaitOutputDone(this, timeoutNanos);
    }

    private void disconnectLocked() {
        if (disconnectCalled) {
            return;
        }
        disconnectCalled = true;
        try {
            id.disconnect();
        } catch (IOException | RuntimeException e) {
            LOG.debug("disconnect from {} failed", remote, e);
        }
    }

    /** Frees everything once nothing the fabric holds can still name this connection's memory. */
    private void tryTeardownLocked() {
        if (tornDown || !(userClosed || failure != null)) {
            return;
        }
        if (finAfterConnect && state == CONNECTING && failure == null && !disconnectCalled && !disconnectSeen) {
            // Its FIN goes once the connect completes (or the linger bound gives up on it).
            return;
        }
        if (connectedOnce && !((disconnectSeen || qp.isError()) && postedRecvs == 0)) {
            return;
        }
        teardownLocked();
    }

    private void teardownLocked() {
        tornDown = true;
        state = CLOSED;
        trackOwedLocked();
        if (lingering) {
            lingering = false;
            engine.endLinger(this);
        }
        engine.unregister(this, id, qpNum);
        id.close();
        if (cq != null) {
            engine.releaseCq(cq, cqEntries);
            cq = null;
        }
        if (slotsAllocated) {
            // Slots lent out return through their loan, and queued frames still unread through read or close.
            boolean[] keep = lentOut;
            if (readHead != readTail) {
                keep = lentOut.clone();
                for (long k = readHead; k != readTail; k++) {
                    keep[readQueue[(int) (k % recvCount)]] = true;
                }
            }
            for (int i = 0; i < recvCount; i++) {
                if (!keep[i]) {
                    pool.free(recvIds[i]);
                }
            }
            pool.free(stagingIds, stagingCount);
            pool.free(controlSlotId);
            slotsAllocated = false;
            engine.slotsFreed();
        }
    }

    /** Tears down now; a failure of the fabric's own teardown is only logged (nobody is left to tell). */
    private void teardownQuietlyLocked() {
        try {
            teardownLocked();
        } catch (RuntimeException e) {
            LOG.debug("teardown of {} failed", this, e);
        }
    }

    /** Engine shutdown or a failed setup: tear down at once, whatever the fabric still holds. */
    void destroy() {
        synchronized (lock) {
            if (tornDown) {
                return;
            }
            if (failure == null) {
                failure = new IOException("the " + engine.fabricName() + " engine closed");
            }
            discardQueuedLocked(false);
            teardownQuietlyLocked();
        }
        wakeAll();
        fireReadiness();
    }

    private boolean judgementPending() {
        synchronized (lock) {
            return disconnectJudgementPending;
        }
    }

    @Override
    public void close() {
        if (!isClosedLocally()) {
            // Bytes already in this side's ring are received, in TCP's terms, even if no completion was polled yet:
            // whether the close finds them unread decides between FIN and reset.
            engine.progressIfNotInside();
        }
        boolean aborted = false;
        synchronized (lock) {
            if (userClosed) {
                return;
            }
            if ((readHead != readTail || spillBytes > 0) && !tornDown && state == OPEN && failure == null
                && !disconnectSeen) {
                // As TCP's close with unread received bytes: a reset, not a FIN; unsent bytes are dropped.
                abortLocked();
                lastReady = readyOpsLocked();
                aborted = true;
            }
        }
        if (aborted) {
            wakeAll();
            fireReadiness();
            return;
        }
        synchronized (lock) {
            if (userClosed) {
                return;
            }
            userClosed = true;
            publishStandingLocked();
            if (tornDown) {
                discardQueuedLocked(false);
            } else {
                if (client && state == CONNECTING && failure == null && !disconnectSeen) {
                    inputShutdown = true;
                    outputShutdown = true;
                    finPending = true;
                    finAfterConnect = true;
                } else if (state != OPEN || failure != null || disconnectSeen) {
                    discardQueuedLocked(state == OPEN && failure == null);
                    disconnectLocked();
                } else {
                    inputShutdown = true;
                    discardQueuedLocked(true);
                    outputShutdown = true;
                    finPending = true;
                    flushLocked();
                    if (finCompleted) {
                        disconnectLocked();
                    }
                    // Otherwise the FIN's completion disconnects (no blocking here).
                }
                tryTeardownLocked();
                lingerLocked();
            }
            lastReady = readyOpsLocked();
        }
        wakeAll();
        fireReadiness();
    }

    @Override
    public void abort() {
        synchronized (lock) {
            abortLocked();
        }
        wakeAll();
        fireReadiness();
    }

    /**
     * The exit hook's close, as the kernel's close of an ending process's socket: what a blocking write under way
     * had staged and not sent was never accepted (its thread never returns from it), so it is dropped, and the FIN
     * follows the bytes that left: the peer reads them, then end of stream, as after a TCP writer that ended
     * inside a blocking write. Bytes of returned writes are delivered first, as by {@link #close}.
     */
    void closeAtExit() {
        synchronized (lock) {
            if (!userClosed && blockingWriteFrom >= 0 && postSeq >= blockingWriteFrom && fillSeq > postSeq) {
                fillSeq = postSeq;
                holdSince = 0;
            }
        }
        close();
    }

    private void abortLocked() {
        userClosed = true;
        publishStandingLocked();
        discardQueuedLocked(false);
        if (!tornDown) {
            // Staged bytes that never left are dropped, as a reset drops a TCP socket's send queue.
            fillSeq = postSeq;
            finPending = false;
            if (!resetAfterInFlightLocked()) {
                disconnectLocked();
            }
            tryTeardownLocked();
            lingerLocked();
        }
    }

    @Override
    public void setLingerZero(boolean lingerZero) {
        this.lingerZero = lingerZero;
    }

    /** Whether SO_LINGER is 0: the close at JVM exit is abortive. */
    boolean lingerZero() {
        return lingerZero;
    }

    /**
     * Frames already posted leave before the reset, as TCP has sent what its window allowed by then: a disconnect
     * now would flush those still in the send queue (and a fabric that carries sends out when polled, loopback,
     * has carried out none). A signalled CREDIT frame (harmless to the peer) is posted behind them; its
     * completion vouches for them all and triggers the disconnect. False when nothing is in flight or no marker
     * can be posted: disconnect at once.
     */
    private boolean resetAfterInFlightLocked() {
        if ((sendCompleted == sendPosted && !finPosted) || !canPostLocked() || controlFree() == 0
            || !credit.canSendControl()) {
            return false;
        }
        if (!postControlLocked(TYPE_CREDIT, true, FrameDescriptor.FLAG_RESET)) {
            return false;
        }
        abortSeq = sendPosted - 1;
        return true;
    }

    // -------------------------------------------------------------------------------------------------------------
    // Readiness.

    /** {@inheritDoc} A handshake still under way drives the engine's progress once, as a read does. */
    @Override
    public boolean finishConnect() throws IOException {
        if (finishConnectOnce()) {
            return true;
        }
        // Waiting briefly for a thread that holds the progress lock (the closer may be polling this very
        // handshake's event): looked at again whatever that progress found.
        engine.progressIfNotInside();
        return finishConnectOnce();
    }

    private boolean finishConnectOnce() throws IOException {
        synchronized (lock) {
            if (failure != null) {
                throw failure;
            }
            if (state == OPEN) {
                connectFinished = true;
                return true;
            }
            if (userClosed) {
                throw new IOException("connection closed");
            }
            return false;
        }
    }

    @Override
    public boolean isConnected() {
        synchronized (lock) {
            return state == OPEN && failure == null;
        }
    }

    @Override
    public int readyOps() {
        synchronized (lock) {
            return readyOpsLocked() | (allPostedLocked() ? Readiness.POSTED : 0);
        }
    }

    @Override
    public boolean allPosted() {
        synchronized (lock) {
            return allPostedLocked();
        }
    }

    private boolean allPostedLocked() {
        return postSeq == fillSeq || !canPostLocked();
    }

    @Override
    public int available() {
        engine.progress();
        synchronized (lock) {
            spillLocked(true);
            return inputShutdown ? 0 : (int) Math.min(Integer.MAX_VALUE, available);
        }
    }

    private int readyOpsLocked() {
        if (client && !connectFinished) {
            return state == OPEN || failure != null ? Readiness.CONNECT : 0;
        }
        int ops = 0;
        boolean disconnected = disconnectSeen && !disconnectJudgementPending;
        if (failure != null || available > 0 || finReceived || inputShutdown || disconnected) {
            ops |= Readiness.READ;
        }
        if (failure != null || (state == OPEN && (outputShutdown || disconnected || stagingRoomLocked()))) {
            ops |= Readiness.WRITE;
        }
        return ops;
    }

    /** Whether readiness gained an operation (or more bytes arrived) since last reported. */
    private boolean updateReadinessLocked() {
        int now = readyOpsLocked();
        boolean gained = (now & ~lastReady) != 0 || readEvent;
        readEvent = false;
        lastReady = now;
        if (gained && (now & Readiness.WRITE) != 0) {
            writeBlocked = false;
        }
        return gained;
    }

    /** Threads blocked in {@link #await} on this connection (each a {@link FabricEngine} waiter). */
    private final ArrayList<Notifier> waitersHere = new ArrayList<>(2);

    /** Registers a thread that waits on this connection: it is signalled whenever this connection changes. */
    void addWaiter(Notifier w) {
        synchronized (waitersHere) {
            waitersHere.add(w);
        }
    }

    void removeWaiter(Notifier w) {
        synchronized (waitersHere) {
            waitersHere.remove(w);
        }
    }

    /**
     * Signals the threads blocked on this connection (called after a change, outside the connection's lock): they
     * re-check what they wait for. Only these: a completion for one connection no longer wakes every thread
     * blocked on the engine.
     */
    private void signalWaiters() {
        synchronized (waitersHere) {
            for (int i = 0, n = waitersHere.size(); i < n; i++) {
                waitersHere.get(i).signal();
            }
        }
    }

    /** This connection's waiters, and the engine's (selectors, listeners, and one thread to drive progress). */
    private void wakeAll() {
        signalWaiters();
        engine.wakeWaiters();
    }

    private void fireReadiness() {
        for (ReadinessListener l : readinessListeners) {
            try {
                l.readinessChanged(this);
            } catch (RuntimeException e) {
                LOG.warn("a readiness listener of {} failed", this, e);
            }
        }
    }

    @Override
    public int await(int ops, long timeoutNanos) throws IOException {
        return engine.await(this, ops, timeoutNanos);
    }

    @Override
    public boolean isClosedLocally() {
        synchronized (lock) {
            return userClosed;
        }
    }

    @Override
    public void addReadinessListener(ReadinessListener l) {
        synchronized (listenersLock) {
            readinessListeners = ReadinessListeners.with(readinessListeners, l);
        }
    }

    @Override
    public void removeReadinessListener(ReadinessListener l) {
        synchronized (listenersLock) {
            readinessListeners = ReadinessListeners.without(readinessListeners, l);
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        return id.localAddress();
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    @Override
    public Engine engine() {
        return engine;
    }

    /** The queue pair's number (for tests and diagnostics); -1 before it exists. */
    int qpNum() {
        return qpNum;
    }

    /** Whether every resource went back (for tests). */
    boolean isTornDown() {
        synchronized (lock) {
            return tornDown;
        }
    }

    /** The credit window's state, for diagnostics. */
    String creditState() {
        synchronized (lock) {
            return creditStateLocked();
        }
    }

    private String creditStateLocked() {
        return credit + (writeBlocked ? " write-blocked" : "") + " staged " + (fillSeq - postSeq) + " posted "
            + (postSeq - freeSeq) + " held " + (readTail - readHead) + " posted receives " + postedRecvs;
    }

    @Override
    public String toString() {
        return "connection(" + (client ? "to " : "from ") + remote + ", qp " + qpNum + ")";
    }
}
