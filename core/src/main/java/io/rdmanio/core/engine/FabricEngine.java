package io.rdmanio.core.engine;

import io.rdmanio.core.Logs;
import io.rdmanio.core.VirtualThreads;
import io.rdmanio.core.buffer.SlotPool;
import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.Notifier;
import io.rdmanio.core.protocol.HandshakeDescriptor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectableChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;

/**
 * The {@link Engine} over one {@link Fabric}: one event channel, completion queues sized so that they never
 * overflow, a {@link SlotPool} of registered memory, and the connections and listeners made on them.
 *
 * <p>Thread-safety: {@link #progress()} polls under {@link #progressLock}, taken with {@code tryLock} so a second
 * caller returns at once; connections are entered under it with their own lock (order: progress lock, then a
 * connection's lock; never the reverse). Setup state (the id and queue-pair maps, the completion-queue budget)
 * is guarded by {@link #setupLock}, which is never held while a connection lock is taken. Waiters are guarded by
 * their list's monitor, a leaf lock. Arming and withdrawing relays take {@link #armLock} first, then the waiters'
 * monitor or the fabric's queue locks; nothing holding those takes it. The lingering connections are guarded by
 * their list's monitor, a leaf lock taken under a connection's lock; the linger expiry holds {@link #expireLock}
 * while it takes connections' locks, one at a time.
 */
final class FabricEngine implements Engine {

    private static final Logger LOG = Logs.get(FabricEngine.class);

    /** Completion queues are created with at least this many entries; a connection never spans two. */
    private static final int CQ_ENTRIES = 16384;
    /** Completions moved per poll call. */
    private static final int POLL_BATCH = 128;
    /** Poll calls per completion queue per progress, so one busy queue cannot starve the others for long. */
    private static final int POLL_ROUNDS = 8;
    /**
     * At exit, how long a connection must go unused by its application before the exit hook closes it: other
     * shutdown hooks may still be writing on it.
     */
    private static final long EXIT_QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How long a wholly free chunk of the pool stays registered before the closer gives it back. */
    private static final long CHUNK_RELEASE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * How long a completion queue beyond the first stays with no connection before the closer destroys it (a
     * torn-down queue pair's last flush completions have long been polled by then).
     */
    private static final long CQ_RELEASE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * How long the closer leaves owed work (staged bytes waiting for credit, credit owed to a peer) to the
     * application's own progress (a select, a read, a write, a blocking wait) before it drives progress itself.
     * It bounds how long such bytes may wait after their credit returned when the application drives nothing,
     * and how often the closer wakes while the application does.
     */
    static final long OWED_GRACE_NANOS = 1_000_000;
    /** Chunk size of the buffer pool, unless the fabric prefers another ({@code Fabric.preferredAllocationSize}). */
    private static final int POOL_CHUNK_BYTES = 4 << 20;

    final Fabric fabric;
    private final boolean ownsFabric;
    final EngineConfig config;
    final SlotPool pool;
    private final EventChannel events;
    private final long incarnationBase = ThreadLocalRandom.current().nextLong() & ~0xffffffffL;
    private final AtomicLong incarnations = new AtomicLong();

    // ---- guarded by progressLock
    private final ReentrantLock progressLock = new ReentrantLock();
    private final Completions completions = new Completions(POLL_BATCH);

    // ---- guarded by setupLock; the published snapshots are read without it
    private final Object setupLock = new Object();
    private final IdentityHashMap<CmId, Object> byId = new IdentityHashMap<>();
    private final QpTable<FabricConnection> byQp = new QpTable<>();
    private final List<CqBudget> cqBudgets = new ArrayList<>();
    private volatile CompletionQueue[] cqs = new CompletionQueue[0];
    /** Some queue beyond the first has no connection (set under setupLock; read by the closer without it). */
    private volatile boolean idleCqs;
    /** The distinct wakeup channels of {@link #cqs}, replaced with it. */
    private volatile List<SelectableChannel> wakeupChannels = List.of();
    private final List<FabricConnection> connections = new ArrayList<>();
    private final List<FabricListener> listeners = new ArrayList<>();
    private volatile boolean closed;

    // ---- guarded by waiters
    private final ArrayList<Notifier> waiters = new ArrayList<>();
    /**
     * The waiters that armed some queue without watching its wakeup channel: a fabric thread may have to stand by
     * to deliver their notification. A subset of {@link #waiters}.
     */
    private final ArrayList<Notifier> relayWaiters = new ArrayList<>();
    /** The size of {@link #relayWaiters}, readable without the lock. */
    private volatile int relayWaiterCount;

    // ---- arming: armLock is outermost (taken before waiters and before any queue's lock). A queue's relayed arm
    // outlives the waiter it was made for when that waiter stops waiting for another reason than a completion of
    // that queue (another queue's completion, a local close, a timeout, an interrupt); it is withdrawn once no
    // registered waiter relies on a relay, or a fabric thread would stand by for a notification nobody awaits.
    private final Object armLock = new Object();
    /** Some queue may hold a relayed arm that {@link #withdrawIdleRelays} has not withdrawn yet. */
    private volatile boolean relayArmed;
    private volatile boolean signalled;
    private final Notifier fabricNotifier = this::fabricSignalled;

    // ---- connection-manager events: the event channel stays armed with eventNotifier whether or not anyone waits,
    // so that a connect request is answered and a handshake completed without the application accepting or
    // otherwise driving this engine, as the kernel completes a TCP handshake into the listener's backlog before
    // accept. The events are polled by a waiter when one is registered, else by the closer; whoever polls them last
    // re-arms ({@link #drainEvents}).
    private final Notifier eventNotifier = this::eventsArrived;
    /** Events were posted since the channel was last re-armed: some thread must poll them and re-arm. */
    private volatile boolean eventsPending;
    /** Where one blocked platform thread waits on the wakeup channels itself. */
    private final DoorbellSelector doorbell = new DoorbellSelector();
    /** Where the closer waits on them while it takes arrivals nobody else does ({@link #arrivalsRound}). */
    private final DoorbellSelector closerDoorbell = new DoorbellSelector();

    // ---- guarded by flushQueue: connections with deferred work (credit after reads, returned loans)
    private final ArrayDeque<FabricConnection> flushQueue = new ArrayDeque<>();
    private volatile boolean flushPending;

    // ---- the closer: a daemon thread that drives progress while connections are closing or failed and not
    // yet torn down, so that close() keeps its promise (FIN after staged bytes, then every slot back) without the
    // application driving this engine again, and resets those that outlive the linger bounds (time without
    // delivering, memory held). Idle (parked, no deadline) otherwise; never on the data path of an application
    // that reads.
    // It also keeps the promise of a write: while some connection owes its peer bytes or a FIN that wait for credit
    // (or credit is owed to a peer), and nobody has driven progress for OWED_GRACE_NANOS, it drives progress
    // itself and waits armed for the completion that brings the credit. And it takes the arrivals of open
    // connections while the application neither drives progress nor waits (arrivalsRound): parked while it does.
    private final AtomicInteger lingering = new AtomicInteger();
    private final AtomicInteger owing = new AtomicInteger();
    private final Object closerLock = new Object();
    private volatile Thread closer;
    /** Connections holding a frame of small writes back (guarded by itself; see {@link #beginHold}). */
    private final java.util.ArrayList<FabricConnection> holding = new java.util.ArrayList<>();
    /** {@link #holding} is not empty; read without its lock by progress and the closer. */
    private volatile boolean holdsPending;
    /** Progress's copy of {@link #holding} (under the progress lock). */
    private FabricConnection[] holdScratch = new FabricConnection[16];
    /** The linger bound: how long a closed connection may go without delivering anything. */
    final long lingerNanos;

    // ---- guarded by lingerers (a leaf lock): connections closed or failed and not torn down, oldest first
    private final ArrayList<FabricConnection> lingerers = new ArrayList<>();
    // ---- confined to the thread running lingerRound (the closer, or the exit hook; serialized by expireLock)
    private final Object expireLock = new Object();
    private FabricConnection[] expireScratch = new FabricConnection[8];
    /** The closer is parked without a deadline (nothing lingers, nothing is owed): it must be unparked for work. */
    private volatile boolean closerIdle;
    /**
     * A connection began to linger since the thread in {@link #lingerRound} last looked: the memory bound may be
     * exceeded now, so that thread must look again before it waits (no completion need ever come to wake it: the
     * lingering connections' peers may not be reading).
     */
    private volatile boolean lingerAdded;
    /** The waiter of the thread in {@link #lingerRound} (the closer or the exit hook), signalled by a new lingerer. */
    private volatile ParkingWaiter lingerWaiter;
    /**
     * The closer's waiter, once it runs: its waits for a signal ignore a bare unpark, so whoever wakes the closer
     * signals this (a connection that began to linger while the closer waited out owed work, say, would otherwise
     * wait for a completion that a peer that does not read never sends).
     */
    private volatile ParkingWaiter closerWaiter;
    /**
     * Set when a connection gives its slots or completion-queue entries back; cleared by the closer before it
     * works out when to release idle chunks and queues. A wait of the closer that began with the old answer (no
     * release due, say, while the burst's last connections still held their slots) is cut short, so what the burst
     * registered is given back after its grace whether or not anything else wakes the closer.
     */
    private volatile boolean slotsReturned;
    /**
     * How long the application must have left progress alone before the closer takes the peers' frames itself
     * ({@link #arrivalsRound}): a reader that has not read yet would otherwise leave them in their slots, so that a
     * peer's small writes stop at one per slot (its frames are packed, and credit returned, only when polled) where
     * TCP's receive buffer takes them, and a writer waits for its reader (a parent that reads its child's output
     * only once the child has exited never sees it exit).
     */
    static final long ARRIVALS_GRACE_NANOS = 1_000_000;
    /** The longest {@link #arrivalsGrace}, reached while the application keeps driving progress. */
    static final long ARRIVALS_GRACE_MAX_NANOS = 100_000_000;
    /** The closer's current grace before it looks again whether the application still drives (closer only). */
    private long arrivalsGrace;
    /** The closer parks until no other thread waits (guarded by waiters). */
    private boolean closerAside;
    /** The closer is inside the progress of an {@link #arrivalsRound} (written and read by the closer only). */
    private boolean takingArrivals;
    /**
     * The most bytes this engine's connections may hold in their spills together ({@link
     * FabricConnection#spillLocked}): a sixteenth of the heap, at most 64 MiB.
     */
    static final long SPILL_MAX_BYTES = Math.min(64L << 20, Runtime.getRuntime().maxMemory() / 16);
    /** Bytes held in the connections' spills now. */
    private final AtomicLong spilled = new AtomicLong();
    /** Signals to waiters other than the closer so far (written under the waiters' lock). */
    private volatile long appSignals;
    /** Progress runs so far; written under progressLock, read by the closer to see whether anyone drives. */
    private volatile long progressRuns;

    // ---- counters
    final AtomicLong connectionsOpened = new AtomicLong();
    final AtomicLong connectionsFailed = new AtomicLong();
    final AtomicLong bytesSent = new AtomicLong();
    final AtomicLong bytesReceived = new AtomicLong();
    final AtomicLong framesSent = new AtomicLong();
    final AtomicLong creditFramesSent = new AtomicLong();
    final AtomicLong inlineFramesSent = new AtomicLong();
    final AtomicLong creditStalls = new AtomicLong();
    final AtomicLong receiverNotReady = new AtomicLong();
    final AtomicLong protocolErrors = new AtomicLong();

    private static final class CqBudget {
        final CompletionQueue cq;
        final int capacity;
        int reserved;
        /** When {@link #reserved} last fell to 0 (nanoTime); meaningful only while it is 0. */
        long idleSince;

        CqBudget(CompletionQueue cq, int capacity) {
            this.cq = cq;
            this.capacity = capacity;
        }
    }

    FabricEngine(Fabric fabric, boolean ownsFabric, EngineConfig config) throws IOException {
        this.fabric = fabric;
        this.ownsFabric = ownsFabric;
        this.config = config;
        int chunk = fabric.preferredAllocationSize();
        this.pool = new SlotPool(fabric, config.slotSize(), chunk > 0 ? chunk : POOL_CHUNK_BYTES);
        this.events = fabric.createEventChannel();
        this.lingerNanos = TimeUnit.MILLISECONDS.toNanos(config.lingerMillis());
        events.requestNotify(eventNotifier);
    }

    @Override
    public String fabricName() {
        return fabric.name();
    }

    /** The buffer pool (exposed for tests that check that nothing leaks). */
    SlotPool pool() {
        return pool;
    }

    long nextIncarnation() {
        return incarnationBase | (incarnations.incrementAndGet() & 0xffffffffL);
    }

    @Override
    public Listener listen(InetSocketAddress local, int backlog, ConnectionOptions options) throws IOException {
        ensureOpen();
        CmId id = fabric.createId(events);
        try {
            id.bind(local);
            id.listen(FabricListener.fabricBacklog(backlog));
        } catch (IOException | RuntimeException e) {
            id.close();
            throw e;
        }
        FabricListener l = new FabricListener(this, id, backlog, options == null ? ConnectionOptions.DEFAULT : options);
        synchronized (setupLock) {
            byId.put(id, l);
            listeners.add(l);
        }
        return l;
    }

    @Override
    public Connection connect(InetSocketAddress remote, ConnectionOptions options) throws IOException {
        ensureOpen();
        FabricConnection c = FabricConnection.connect(this, remote, options == null ? ConnectionOptions.DEFAULT
            : options);
        return c;
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("the " + fabric.name() + " engine is closed");
        }
    }

    // -------------------------------------------------------------------------------------------------------------
    // Setup bookkeeping, called by connections and listeners.

    /** Reserves {@code entries} completion-queue entries, creating a queue when no existing one has room. */
    CompletionQueue reserveCq(int entries) throws IOException {
        synchronized (setupLock) {
            for (CqBudget b : cqBudgets) {
                // An eighth is kept free: a torn-down queue pair's last flush completions may still sit in the
                // queue after its budget was released (verbs does not order send and receive flushes).
                if (b.capacity - b.capacity / 8 - b.reserved >= entries) {
                    b.reserved += entries;
                    return b.cq;
                }
            }
            int capacity = Math.max(CQ_ENTRIES, entries + entries / 4);
            CqBudget b = new CqBudget(fabric.createCompletionQueue(capacity), capacity);
            b.reserved = entries;
            cqBudgets.add(b);
            CompletionQueue[] next = new CompletionQueue[cqBudgets.size()];
            for (int i = 0; i < next.length; i++) {
                next[i] = cqBudgets.get(i).cq;
            }
            cqs = next;
            SelectableChannel w = b.cq.wakeupChannel();
            if (w != null && !wakeupChannels.contains(w)) {
                ArrayList<SelectableChannel> channels = new ArrayList<>(wakeupChannels);
                channels.add(w);
                wakeupChannels = List.copyOf(channels);
            }
            return b.cq;
        }
    }

    void releaseCq(CompletionQueue cq, int entries) {
        boolean idle = false;
        synchronized (setupLock) {
            for (CqBudget b : cqBudgets) {
                if (b.cq == cq) {
                    b.reserved -= entries;
                    if (b.reserved == 0 && cqBudgets.size() > 1) {
                        b.idleSince = System.nanoTime();
                        idleCqs = true;
                        idle = true;
                    }
                    break;
                }
            }
        }
        if (idle) {
            // The closer destroys it once it stayed unused for the grace.
            slotsFreed();
        }
    }

    /**
     * Destroys the completion queues (all but the first) that no connection has used for
     * {@link #CQ_RELEASE_GRACE_NANOS}: a burst of connections makes queues that would otherwise hold their memory
     * (on shm a ready-map file and its descriptor) for the engine's life. Returns when to look again
     * ({@link Long#MAX_VALUE}: nothing idle). The closer's; under the progress lock (nobody polls a queue being
     * destroyed), the arm lock (nobody arms one) and the setup lock, in that order.
     */
    private long releaseIdleCqs(long now) {
        if (!idleCqs) {
            return Long.MAX_VALUE;
        }
        long next = Long.MAX_VALUE;
        List<CompletionQueue> doomed = new ArrayList<>();
        progressLock.lock();
        try {
            synchronized (armLock) {
                synchronized (setupLock) {
                    if (closed) {
                        return Long.MAX_VALUE;
                    }
                    boolean anyIdle = false;
                    for (int i = cqBudgets.size() - 1; i >= 1; i--) {
                        CqBudget b = cqBudgets.get(i);
                        if (b.reserved != 0) {
                            continue;
                        }
                        long due = b.idleSince + CQ_RELEASE_GRACE_NANOS;
                        if (due - now <= 0) {
                            cqBudgets.remove(i);
                            doomed.add(b.cq);
                        } else {
                            anyIdle = true;
                            next = Math.min(next, due);
                        }
                    }
                    idleCqs = anyIdle;
                    if (!doomed.isEmpty()) {
                        CompletionQueue[] left = new CompletionQueue[cqBudgets.size()];
                        ArrayList<SelectableChannel> channels = new ArrayList<>();
                        for (int i = 0; i < left.length; i++) {
                            left[i] = cqBudgets.get(i).cq;
                            SelectableChannel w = left[i].wakeupChannel();
                            if (w != null && !channels.contains(w)) {
                                channels.add(w);
                            }
                        }
                        cqs = left;
                        wakeupChannels = List.copyOf(channels);
                    }
                }
                for (CompletionQueue cq : doomed) {
                    try {
                        cq.close();
                    } catch (RuntimeException e) {
                        LOG.debug("closing an idle completion queue of the {} engine failed", fabric.name(), e);
                    }
                }
                if (!doomed.isEmpty()) {
                    doorbell.flush();
                    closerDoorbell.flush();
                }
            }
        } finally {
            progressLock.unlock();
        }
        return next;
    }

    EventChannel events() {
        return events;
    }

    void register(CmId id, FabricConnection c) {
        boolean first;
        synchronized (setupLock) {
            byId.put(id, c);
            connections.add(c);
            first = connections.size() == 1;
        }
        ExitLinger.watch(this);
        if (first && (closerIdle || closer == null)) {
            // The closer takes arrivals the application does not while connections are open (arrivalsRound).
            wakeCloser();
        }
    }

    void registerQp(int qpNum, FabricConnection c) {
        synchronized (setupLock) {
            byQp.put(qpNum, c);
        }
    }

    void unregister(FabricConnection c, CmId id, int qpNum) {
        synchronized (setupLock) {
            if (byId.get(id) == c) {
                byId.remove(id);
            }
            connections.remove(c);
            if (qpNum >= 0) {
                byQp.remove(qpNum, c);
            }
        }
    }

    void unregister(FabricListener l, CmId id) {
        synchronized (setupLock) {
            byId.remove(id);
            listeners.remove(l);
        }
    }

    /** Connections open or still being torn down. */
    int connectionCount() {
        synchronized (setupLock) {
            return connections.size();
        }
    }

    @Override
    public List<ConnectionInfo> connectionTable() {
        List<FabricConnection> snapshot;
        synchronized (setupLock) {
            snapshot = new ArrayList<>(connections);
        }
        List<ConnectionInfo> rows = new ArrayList<>(snapshot.size());
        for (FabricConnection c : snapshot) {
            rows.add(c.info());
        }
        return rows;
    }

    @Override
    public int openConnections() {
        return connectionCount();
    }

    // -------------------------------------------------------------------------------------------------------------
    // Progress.

    /**
     * A progress that runs after this call began, for a caller whose decision depends on what the queues hold now
     * (whether a close finds bytes unread; whether a peer that disconnected closed in order): it waits a moment
     * for a thread that holds the lock (a selector, or the closer polling events), whose progress is short, where
     * {@link #progress()} would return at once. Bounded, so that a holder waiting for this thread cannot deadlock
     * it. Unless this thread is already inside one (a close from a readiness callback): then the outer one
     * finishes the work.
     */
    int progressIfNotInside() {
        if (progressLock.isHeldByCurrentThread()) {
            return 0;
        }
        long deadline = System.nanoTime() + LOCK_SPIN_NANOS;
        while (!progressLock.tryLock()) {
            if (closed) {
                return 0;
            }
            if (System.nanoTime() - deadline > 0) {
                // The holder was descheduled (a busy machine): wait parked, longer, for its short progress to end.
                try {
                    if (!progressLock.tryLock(LOCK_WAIT_NANOS, TimeUnit.NANOSECONDS)) {
                        return 0;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return 0;
                }
                break;
            }
            Thread.yield();
        }
        return progressHoldingLock();
    }

    @Override
    public int progress() {
        if (closed || !progressLock.tryLock()) {
            return 0;
        }
        return progressHoldingLock();
    }

    /** The body of {@link #progress()}, entered with the progress lock held; releases it. */
    private int progressHoldingLock() {
        int work = 0;
        try {
            if (closed) {
                // Closed while this thread waited for the lock: the queues are gone.
                return 0;
            }
            signalled = false;
            progressRuns++;
            if (holdsPending) {
                // First, so that a frame this posts to a peer in this process is polled by this same progress.
                work += releaseHolds();
            }
            work += pollCompletions();
            work += pollEvents();
            if (flushPending) {
                work += drainFlushQueue();
            }
        } finally {
            progressLock.unlock();
        }
        if (eventsPending) {
            work += drainEvents();
        }
        if (work > 0) {
            // A thread that armed after this progress took its completions would otherwise miss them.
            wakeWaiters();
        }
        if (relayArmed && relayWaiterCount == 0) {
            withdrawIdleRelays();
        }
        return work;
    }

    private int pollCompletions() {
        int work = 0;
        Completions c = completions;
        for (CompletionQueue cq : cqs) {
            for (int round = 0; round < POLL_ROUNDS; round++) {
                int n;
                try {
                    n = cq.poll(c);
                } catch (IOException e) {
                    LOG.error("polling a completion queue of the {} engine failed", fabric.name(), e);
                    break;
                }
                for (int i = 0; i < n; i++) {
                    FabricConnection conn = byQp.get(c.qpNum[i]);
                    if (conn != null) {
                        conn.onCompletion(c.wrId[i], c.status[i], c.byteLen[i]);
                    }
                    // else: a queue pair torn down after its last completion was queued; nothing refers to it.
                }
                work += n;
                if (n < c.capacity()) {
                    break;
                }
            }
        }
        return work;
    }

    /**
     * How long {@link #progressIfNotInside} yields, then waits parked, for another thread's progress to end: a
     * progress takes microseconds, but its thread can lose its core for milliseconds on a crowded machine (a close
     * that gave up after 2 ms then found the ring empty and sent a FIN where bytes had arrived unread).
     */
    private static final long LOCK_SPIN_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    private static final long LOCK_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /** Events handled per poll, so that a burst of connects cannot hold the completions back for long. */
    private static final int EVENT_BATCH = 64;

    private int pollEvents() {
        int work = 0;
        for (int i = 0; i < EVENT_BATCH; i++) {
            CmEvent e;
            try {
                e = events.poll();
            } catch (IOException ex) {
                LOG.error("polling the event channel of the {} engine failed", fabric.name(), ex);
                break;
            }
            if (e == null) {
                break;
            }
            work++;
            handleEvent(e);
        }
        return work;
    }

    private void handleEvent(CmEvent e) {
        if (e.type() == CmEvent.Type.CONNECT_REQUEST) {
            Object owner;
            synchronized (setupLock) {
                owner = byId.get(e.listenId());
            }
            if (owner instanceof FabricListener l) {
                l.onConnectRequest(e);
            } else {
                reject(e.id(), HandshakeDescriptor.REASON_LISTENER_CLOSED);
            }
            return;
        }
        Object owner;
        synchronized (setupLock) {
            owner = byId.get(e.id());
        }
        if (owner instanceof FabricConnection c) {
            c.onEvent(e);
        } else if (owner instanceof FabricListener l) {
            l.onEvent(e);
        }
    }

    /** Rejects a connect request with a reason code and this side's values, then destroys the id. */
    void reject(CmId id, int reason) {
        reject(id, reason, null);
    }

    /**
     * Rejects a connect request as {@link #reject(CmId, int)} does, with {@code detail} (ASCII, cut to what the
     * private data holds) after the handshake: the client's exception names it.
     */
    void reject(CmId id, int reason, String detail) {
        ByteBuffer pd = HandshakeDescriptor.allocateRejection(reason, config.slotSize(), config.ringDepth(),
            config.controlSlots(), detail, CmId.MAX_PRIVATE_DATA - HandshakeDescriptor.LENGTH);
        try {
            id.reject(pd);
        } catch (IOException | RuntimeException ex) {
            LOG.debug("rejecting a connect request failed", ex);
        }
        id.close();
    }

    /** Queues {@code c} for {@link FabricConnection#flush} on the next progress. */
    void requestFlush(FabricConnection c) {
        synchronized (flushQueue) {
            if (c.queuedForFlush) {
                return;
            }
            c.queuedForFlush = true;
            flushQueue.add(c);
            flushPending = true;
        }
        wakeWaiters();
        if (closerIdle || closer == null) {
            // Credit owed to a peer: sent by the next progress, whoever drives it (the closer if nobody does).
            wakeCloser();
        }
    }

    private int drainFlushQueue() {
        int work = 0;
        for (;;) {
            FabricConnection c;
            synchronized (flushQueue) {
                c = flushQueue.poll();
                if (c == null) {
                    flushPending = false;
                    return work;
                }
                c.queuedForFlush = false;
            }
            c.flush();
            work++;
        }
    }

    // -------------------------------------------------------------------------------------------------------------
    // Waiting.

    @Override
    public List<SelectableChannel> wakeupChannels() {
        return closed ? List.of() : wakeupChannels;
    }

    @Override
    public boolean arm(Notifier notifier) {
        return arm(notifier, List.of());
    }

    @Override
    public boolean arm(Notifier notifier, List<SelectableChannel> watched) {
        if (closed) {
            return false;
        }
        synchronized (armLock) {
            CompletionQueue[] queues = cqs;
            boolean relay = false;
            for (CompletionQueue cq : queues) {
                relay |= !isWatched(cq, watched);
            }
            synchronized (waiters) {
                if (!waiters.contains(notifier)) {
                    waiters.add(notifier);
                }
                if (relay && !relayWaiters.contains(notifier)) {
                    relayWaiters.add(notifier);
                    relayWaiterCount = relayWaiters.size();
                }
            }
            if (relay) {
                relayArmed = true;
            }
            try {
                for (CompletionQueue cq : queues) {
                    cq.requestNotify(fabricNotifier, isWatched(cq, watched));
                }
            } catch (IOException e) {
                LOG.debug("arming the {} engine failed", fabric.name(), e);
                return false;
            }
        }
        return !(signalled || flushPending || eventsPending || closed);
    }

    private static boolean isWatched(CompletionQueue cq, List<SelectableChannel> watched) {
        if (watched.isEmpty()) {
            return false;
        }
        SelectableChannel w = cq.wakeupChannel();
        return w != null && watched.contains(w);
    }

    /**
     * {@code notifier} stopped waiting (signalled or not): it no longer counts as a waiter, and once no waiter
     * relies on a relay the queues' relayed arms are withdrawn.
     */
    private void endWait(Notifier notifier) {
        boolean look;
        synchronized (waiters) {
            boolean wasWaiting = waiters.remove(notifier);
            if (relayWaiters.remove(notifier)) {
                relayWaiterCount = relayWaiters.size();
            }
            if (!wasWaiting) {
                // Signalled by wakeWaiters (perhaps as the one to drive progress and re-arm the queues) and leaving
                // without re-arming: a thread still blocked on a connection takes that over.
                handOverLocked();
            }
            look = closerMustLookLocked();
        }
        if (look) {
            wakeCloser();
        }
        if (relayArmed && relayWaiterCount == 0) {
            withdrawIdleRelays();
        }
    }

    /**
     * Tells every queue that no waiter needs a fabric thread to deliver its notification any more. The arms stay
     * (a watching selector may still rely on them); only the relay goes. Under {@link #armLock}, so that a waiter
     * arming concurrently either registers before the check (and nothing is withdrawn) or arms after it.
     */
    private void withdrawIdleRelays() {
        synchronized (armLock) {
            synchronized (waiters) {
                if (!relayWaiters.isEmpty()) {
                    return;
                }
                relayArmed = false;
            }
            for (CompletionQueue cq : cqs) {
                cq.withdrawRelay();
            }
        }
    }

    private void fabricSignalled() {
        signalled = true;
        wakeWaiters();
    }

    /**
     * The event channel's notifier: events were posted. The poster may hold locks of its own (a peer's connection,
     * on the loopback fabric), so nothing is handled here: the waiters are signalled, as for a completion, and the
     * closer polls the events when nobody waits.
     */
    private void eventsArrived() {
        eventsPending = true;
        if (closed || progressLock.isHeldByCurrentThread()) {
            // Posted from inside this thread's own progress: it polls them before it ends, or after.
            return;
        }
        fabricSignalled();
        boolean nobodyWaits;
        synchronized (waiters) {
            nobodyWaits = waiters.isEmpty();
        }
        if (nobodyWaits) {
            wakeCloser();
        }
    }

    /**
     * Polls the pending events unless another thread holds the progress lock (it drains them itself when it
     * releases the lock: {@link #eventsPending} is set before the attempt and read after the release), then
     * re-arms the event channel. Returns the events handled.
     */
    private int drainEvents() {
        int work = 0;
        while (eventsPending && !closed && progressLock.tryLock()) {
            try {
                if (closed) {
                    break;
                }
                eventsPending = false;
                int n = pollEvents();
                work += n;
                if (n >= EVENT_BATCH) {
                    eventsPending = true;
                    continue;
                }
                try {
                    // Runs eventsArrived at once (on this thread, which holds the lock: it only marks them pending)
                    // when more were posted meanwhile; the loop then takes them.
                    events.requestNotify(eventNotifier);
                } catch (IOException e) {
                    LOG.debug("re-arming the event channel of the {} engine failed", fabric.name(), e);
                }
            } finally {
                progressLock.unlock();
            }
        }
        return work;
    }

    /** Signals the longest-registered thread blocked on a connection, if any, to drive progress and re-arm. */
    private void handOverLocked() {
        for (int i = 0, n = waiters.size(); i < n; i++) {
            Notifier x = waiters.get(i);
            if (x instanceof ParkingWaiter && ((ParkingWaiter) x).blockedOnConnection) {
                waiters.remove(i);
                if (relayWaiters.remove(x)) {
                    relayWaiterCount = relayWaiters.size();
                }
                x.signal();
                return;
            }
        }
    }

    /**
     * Signals the registered waiters once (they re-arm to wait again): every waiter that is not a thread blocked on
     * one connection (a selector, an accept, a close waiting for delivery), and of the threads blocked on one
     * connection only the longest-registered, which drives progress and re-arms the queues for the others. The
     * others stay registered: their connection signals them itself when it changes
     * ({@link FabricConnection#addWaiter}), so a completion costs a bounded number of wakeups, not one per thread
     * blocked on the engine.
     */
    void wakeWaiters() {
        boolean look;
        synchronized (waiters) {
            int n = waiters.size();
            if (n == 0) {
                return;
            }
            Notifier driver = null;
            Notifier self = closerWaiter;
            boolean app = false;
            int keep = 0;
            for (int i = 0; i < n; i++) {
                Notifier x = waiters.get(i);
                if (driver != null && x instanceof ParkingWaiter && ((ParkingWaiter) x).blockedOnConnection) {
                    waiters.set(keep++, x);
                    continue;
                }
                if (driver == null && x instanceof ParkingWaiter && ((ParkingWaiter) x).blockedOnConnection) {
                    driver = x;
                }
                app |= x != self;
                x.signal();
            }
            if (app) {
                appSignals++;
            }
            waiters.subList(keep, n).clear();
            int relays = 0;
            for (int i = 0, m = relayWaiters.size(); i < m; i++) {
                Notifier x = relayWaiters.get(i);
                if (x != driver && x instanceof ParkingWaiter && ((ParkingWaiter) x).blockedOnConnection) {
                    relayWaiters.set(relays++, x);
                }
            }
            relayWaiters.subList(relays, relayWaiters.size()).clear();
            relayWaiterCount = relays;
            look = closerMustLookLocked();
        }
        if (look) {
            wakeCloser();
        }
    }

    /** A connection was closed or failed and needs progress until it is torn down (called under its lock). */
    void beginLinger(FabricConnection c) {
        synchronized (lingerers) {
            lingerers.add(c);
        }
        lingerAdded = true;
        if (lingering.getAndIncrement() == 0) {
            wakeCloser();
        } else {
            // The closer (or the exit hook) may be waiting out an older connection's deadline, or owed work: the
            // bound is checked now, not then.
            ParkingWaiter w = lingerWaiter;
            if (w != null) {
                w.signal();
            }
            wakeCloser();
        }
    }

    /** A connection has bytes or a FIN that wait for credit (see {@link FabricConnection#trackOwedLocked}). */
    void beginOwing() {
        if (owing.getAndIncrement() == 0 && (closerIdle || closer == null)) {
            wakeCloser();
        }
    }

    /** Nothing waits for credit on that connection any more. */
    void endOwing() {
        owing.decrementAndGet();
    }

    /**
     * A connection holds a frame of small writes back ({@link FabricConnection#holdLastFrameLocked}): the next
     * progress after its time posts it, the closer's if the application drives none. Under the connection's lock
     * (this list's is a leaf).
     */
    void beginHold(FabricConnection c) {
        synchronized (holding) {
            if (c.onHoldList) {
                return;
            }
            c.onHoldList = true;
            holding.add(c);
            holdsPending = true;
        }
        wakeCloser();
    }

    /** Posts the held frames whose time is up; keeps the others on the list. Not under any connection's lock. */
    private int releaseHolds() {
        int n;
        synchronized (holding) {
            n = holding.size();
            if (holdScratch.length < n) {
                holdScratch = new FabricConnection[Math.max(n, holdScratch.length * 2)];
            }
            holding.toArray(holdScratch);
            holding.clear();
            for (int i = 0; i < n; i++) {
                holdScratch[i].onHoldList = false;
            }
            holdsPending = false;
        }
        int released = 0;
        for (int i = 0; i < n; i++) {
            FabricConnection c = holdScratch[i];
            holdScratch[i] = null;
            if (c.releaseHold()) {
                synchronized (holding) {
                    if (!c.onHoldList) {
                        c.onHoldList = true;
                        holding.add(c);
                        holdsPending = true;
                    }
                }
            } else {
                released++;
            }
        }
        return released;
    }

    /** Starts the closer, or unparks it. */
    private void wakeCloser() {
        Thread t = closer;
        if (t == null) {
            synchronized (closerLock) {
                t = closer;
                if (t == null && !closed) {
                    t = new Thread(this::runCloser, "rdmanio-" + fabric.name() + "-closer");
                    t.setDaemon(true);
                    closer = t;
                    t.start();
                    return;
                }
            }
        }
        if (t != null) {
            ParkingWaiter w = closerWaiter;
            if (w != null) {
                w.signal();
            } else {
                LockSupport.unpark(t);
            }
        }
    }

    /** A lingering connection was torn down (called under its lock). */
    void endLinger(FabricConnection c) {
        synchronized (lingerers) {
            lingerers.remove(c);
        }
        lingering.decrementAndGet();
    }

    /**
     * Whether no thread but the closer is registered as waiting and no relayed arm but the closer's is
     * outstanding: what holds whenever the application does not wait on this engine (for tests; the closer arms
     * to take arrivals the application does not, {@link #arrivalsRound}).
     */
    boolean isWaitIdle() {
        synchronized (waiters) {
            Notifier self = closerWaiter;
            boolean closerArmed = self != null && relayWaiters.contains(self);
            return !othersWaitLocked() && relayWaiters.size() == (closerArmed ? 1 : 0)
                && (!relayArmed || closerArmed);
        }
    }

    /** Connections closed or failed and not yet torn down (for tests). */
    int lingeringCount() {
        return lingering.get();
    }

    /** Registered bytes the engine's buffer pool holds (for tests). */
    long registeredBytes() {
        return pool.registeredBytes();
    }

    /** Bytes the buffer pool registers at a time (for tests). */
    long chunkBytes() {
        return (long) pool.slotsPerChunk() * pool.slotSize();
    }

    /** Completion queues the engine holds (for tests). */
    int completionQueueCount() {
        synchronized (setupLock) {
            return cqBudgets.size();
        }
    }

    /** Connections whose bytes or FIN wait for credit (for tests). */
    int owingCount() {
        return owing.get();
    }

    private boolean owesWork() {
        return owing.get() > 0 || flushPending || holdsPending;
    }

    private void runCloser() {
        ParkingWaiter wake = ParkingWaiter.current();
        closerWaiter = wake;
        // progressRuns when this thread last looked (or drove progress itself).
        long seen = -1;
        while (!closed) {
            if (eventsPending && drainEvents() > 0) {
                // Connection-manager events nobody was waiting to handle (eventsArrived).
                fabricSignalled();
            }
            slotsReturned = false;
            long now = System.nanoTime();
            long release = Math.min(pool.releaseIdleChunks(now, CHUNK_RELEASE_GRACE_NANOS), releaseIdleCqs(now));
            if (lingering.get() > 0) {
                lingerRound(wake, release);
                seen = progressRuns;
                continue;
            }
            if (!owesWork() && connectionCount() > 0) {
                seen = arrivalsRound(wake, release, seen);
                continue;
            }
            if (!owesWork()) {
                endWait(wake);
                closerIdle = true;
                // Re-checked after publishing closerIdle: whoever adds work after this sees it and unparks (a first
                // connection too: register reads closerIdle after adding it).
                if (lingering.get() == 0 && !owesWork() && !eventsPending && !closed && connectionCount() == 0
                    && !slotsReturned) {
                    if (release == Long.MAX_VALUE) {
                        LockSupport.park(this);
                    } else {
                        LockSupport.parkNanos(this, release - System.nanoTime());
                    }
                }
                closerIdle = false;
                continue;
            }
            // Owed work only: the application usually drives progress itself. Step in only when nobody has for a
            // grace period; otherwise look again after one.
            long runs = progressRuns;
            if (runs != seen) {
                seen = runs;
                endWait(wake);
                LockSupport.parkNanos(this, Math.min(OWED_GRACE_NANOS, Math.max(0, release - System.nanoTime())));
                continue;
            }
            progress();
            seen = progressRuns;
            wake.reset();
            if (owesWork() && lingering.get() == 0 && !slotsReturned && arm(wake)) {
                // A held frame's time runs out without any signal: look again after a grace at most.
                wake.awaitSignal(this, holdsPending
                    ? Math.min(release, System.nanoTime() + OWED_GRACE_NANOS) : release);
            }
        }
    }

    /**
     * One round of taking the peers' frames while connections are open and nothing is owed or lingering, when the
     * application does not: returns {@code progressRuns} as this thread last saw it. The application takes its
     * arrivals itself while it drives progress (the closer then looks again after {@link #arrivalsGrace}, doubled
     * each time it finds the application still driving, up to {@link #ARRIVALS_GRACE_MAX_NANOS}) or while one of its
     * threads waits (the closer then parks until the last such wait ends). Otherwise the closer polls, arms and
     * waits armed, so each arrival is taken as it comes, as the kernel takes a TCP segment whether or not anyone
     * reads.
     */
    private long arrivalsRound(ParkingWaiter wake, long release, long seen) {
        long runs = progressRuns;
        if (runs != seen) {
            endWait(wake);
            arrivalsGrace = arrivalsGrace == 0 ? ARRIVALS_GRACE_NANOS
                : Math.min(2 * arrivalsGrace, ARRIVALS_GRACE_MAX_NANOS);
            idlePark(Math.min(release, System.nanoTime() + arrivalsGrace));
            return runs;
        }
        endWait(wake);
        if (standAside()) {
            idlePark(release);
            return runs;
        }
        arrivalsGrace = 0;
        takingArrivals = true;
        try {
            progress();
        } finally {
            takingArrivals = false;
        }
        long after = progressRuns;
        long signals = appSignals;
        wake.reset();
        closerIdle = true;
        // On the wakeup channels themselves where the fabric offers them, as a blocked thread does: no fabric thread
        // stands by to relay (disni's completion thread stays parked; shm's peers ring the pipe, not the socket).
        List<SelectableChannel> channels = wakeupChannels;
        boolean direct = closerDoorbell.tryEnter(channels);
        try {
            List<SelectableChannel> watched = direct ? closerDoorbell.watch(channels) : List.of();
            if (!owesWork() && lingering.get() == 0 && !slotsReturned && arm(wake, watched)) {
                if (watched.isEmpty()) {
                    wake.awaitSignal(this, release);
                } else {
                    wake.awaitDoorbell(closerDoorbell, release);
                }
            }
        } finally {
            if (direct) {
                closerDoorbell.exit();
            }
        }
        closerIdle = false;
        if (appSignals != signals) {
            // A thread of the application was woken by the same arrival: it takes them from now on.
            endWait(wake);
            arrivalsGrace = ARRIVALS_GRACE_NANOS;
            idlePark(Math.min(release, System.nanoTime() + arrivalsGrace));
        }
        return after;
    }

    /**
     * Whether the calling thread is the closer taking arrivals the application does not take: it neither drives
     * progress nor waits, so its unread frames may be spilled ({@link FabricConnection#spillLocked}).
     */
    boolean takingArrivalsForNobody() {
        return Thread.currentThread() == closer && takingArrivals;
    }

    /** Reserves {@code bytes} of the engine's spill bound; false when they would exceed it. */
    boolean reserveSpill(long bytes) {
        long now;
        do {
            now = spilled.get();
            if (now + bytes > SPILL_MAX_BYTES) {
                return false;
            }
        } while (!spilled.compareAndSet(now, now + bytes));
        return true;
    }

    /** Gives back {@code bytes} of the spill bound: read, or dropped with their connection. */
    void releaseSpill(long bytes) {
        if (bytes > 0) {
            spilled.addAndGet(-bytes);
        }
    }

    /**
     * Whether a thread other than the closer waits on this engine; if so the closer is marked as standing aside,
     * and the last such wait to end unparks it.
     */
    private boolean standAside() {
        synchronized (waiters) {
            if (!othersWaitLocked()) {
                return false;
            }
            closerAside = true;
            return true;
        }
    }

    private boolean othersWaitLocked() {
        Notifier self = closerWaiter;
        for (int i = 0, n = waiters.size(); i < n; i++) {
            if (waiters.get(i) != self) {
                return true;
            }
        }
        return false;
    }

    /** Under the waiters' lock, after a waiter left: whether the closer stood aside for it and must look now. */
    private boolean closerMustLookLocked() {
        if (closerAside && !othersWaitLocked()) {
            closerAside = false;
            return true;
        }
        return false;
    }

    /** The closer parks until {@code deadline}, unparked by new work (it is idle meanwhile). */
    private void idlePark(long deadline) {
        closerIdle = true;
        if (lingering.get() == 0 && !owesWork() && !eventsPending && !closed && !slotsReturned) {
            if (deadline == Long.MAX_VALUE) {
                LockSupport.park(this);
            } else {
                LockSupport.parkNanos(this, Math.max(0, deadline - System.nanoTime()));
            }
        }
        closerIdle = false;
    }

    /**
     * A connection gave its slots (or queue entries) back: the closer gives whole chunks and idle queues back after
     * their grace. Its current wait, whatever it waits for, ends so that it works the release time out again: an
     * unpark alone would be taken for a spurious wakeup by a waiter that waits for a signal.
     */
    void slotsFreed() {
        slotsReturned = true;
        Thread t = closer;
        if (t != null) {
            ParkingWaiter w = closerWaiter;
            if (w != null) {
                w.signal();
            } else {
                LockSupport.unpark(t);
            }
        }
    }

    /**
     * One round of driving lingering connections: progress, reset those past their bounds, then wait (armed) for
     * the next completion, the earliest linger deadline or {@code until}, whichever comes first.
     */
    private void lingerRound(ParkingWaiter wake, long until) {
        lingerWaiter = wake;
        lingerAdded = false;
        progress();
        long next = Math.min(until, expireLingerers());
        wake.reset();
        // A connection that began to linger after the check above either sees this waiter (reset, so its signal
        // counts) or set lingerAdded before this thread reads it: either way no wait outlasts the bound.
        if ((lingering.get() > 0 || owesWork() || until != Long.MAX_VALUE) && arm(wake) && !lingerAdded
            && !slotsReturned) {
            wake.awaitSignal(this, next);
        }
    }

    /**
     * Resets the lingering connections that went {@link #lingerNanos} without delivering anything, then, oldest
     * first, those beyond the memory bound; returns the earliest deadline of those left ({@link Long#MAX_VALUE}:
     * none). Not under any connection's lock (it takes theirs).
     */
    private long expireLingerers() {
        synchronized (expireLock) {
            int n;
            synchronized (lingerers) {
                n = lingerers.size();
                if (expireScratch.length < n) {
                    expireScratch = new FabricConnection[Math.max(n, expireScratch.length * 2)];
                }
                lingerers.toArray(expireScratch);
            }
            long now = System.nanoTime();
            long next = Long.MAX_VALUE;
            long held = 0;
            for (int i = 0; i < n; i++) {
                held += expireScratch[i].lingerFootprint();
            }
            long cap = config.lingerMaxBytes();
            for (int i = 0; i < n; i++) {
                FabricConnection c = expireScratch[i];
                expireScratch[i] = null;
                long footprint = c.lingerFootprint();
                if (held > cap) {
                    if (c.expireLinger("more than rdmanio.lingerMaxBytes=" + cap + " bytes were held by closed "
                        + "connections still delivering")) {
                        held -= footprint;
                    }
                    continue;
                }
                long deadline = c.lingerDeadline();
                if (deadline != Long.MAX_VALUE && deadline - now <= 0) {
                    c.expireLinger("nothing was delivered for rdmanio.lingerMillis=" + config.lingerMillis()
                        + " ms");
                } else if (deadline - next < 0) {
                    next = deadline;
                }
            }
            return next;
        }
    }

    /** Whether every lingering connection has delivered its bytes and FIN, or is past delivering (for exit). */
    private boolean lingerersDelivered() {
        FabricConnection[] snapshot;
        synchronized (lingerers) {
            snapshot = lingerers.toArray(new FabricConnection[0]);
        }
        // Outside the leaf lock: a connection's lock is taken before it, never after.
        for (FabricConnection c : snapshot) {
            if (!c.isOutputDone()) {
                return false;
            }
        }
        return true;
    }

    /**
     * At JVM exit: closes every connection still open, as the kernel closes a process's sockets (FIN after the
     * bytes written), then drives them until each has delivered its bytes and FIN, failed, or outlived the
     * linger bound. Called by {@link ExitLinger}'s shutdown hook; the closer is a daemon, so nothing else would.
     *
     * <p>{@code afterApplicationHooks}: every application shutdown hook has finished, so every connection is
     * closed at once. Otherwise the application's own hooks run at the same time and may still be using a
     * connection (a server's graceful stop answering its last requests, then closing): a connection is closed here
     * only once its application has neither written nor read on it for {@link #EXIT_QUIET_NANOS}, or when the
     * linger bound has passed since the exit began, whichever comes first.
     */
    void lingerAtExit(boolean afterApplicationHooks) {
        if (closed) {
            return;
        }
        long quietNanos = afterApplicationHooks ? 0 : EXIT_QUIET_NANOS;
        long start = System.nanoTime();
        IdentityHashMap<FabricConnection, long[]> activity = new IdentityHashMap<>();
        ParkingWaiter wake = ParkingWaiter.current();
        boolean listenersClosed = false;
        try {
            while (!closed) {
                long now = System.nanoTime();
                boolean late = now - start - lingerNanos >= 0;
                if (!listenersClosed && (late || now - start - quietNanos >= 0)) {
                    // As the kernel closes a process's listening sockets at exit: the connections they hold and never
                    // accepted are reset, not ended in order (before the loop below would close them).
                    listenersClosed = true;
                    List<FabricListener> ls;
                    synchronized (setupLock) {
                        ls = new ArrayList<>(listeners);
                    }
                    for (FabricListener l : ls) {
                        l.close();
                    }
                }
                List<FabricConnection> open;
                synchronized (setupLock) {
                    open = new ArrayList<>(connections);
                }
                long nextCheck = Long.MAX_VALUE;
                int stillOpen = 0;
                for (FabricConnection c : open) {
                    if (c.isClosedLocally()) {
                        continue;
                    }
                    long bytes = c.appBytes();
                    long[] seen = activity.get(c);
                    if (seen == null || seen[0] != bytes) {
                        seen = new long[] {bytes, now};
                        activity.put(c, seen);
                    }
                    if (late || now - seen[1] - quietNanos >= 0) {
                        // As the kernel closes a process's sockets at exit: SO_LINGER 0 resets.
                        if (c.lingerZero()) {
                            c.abort();
                        } else {
                            c.closeAtExit();
                        }
                    } else {
                        stillOpen++;
                        nextCheck = Math.min(nextCheck, seen[1] + quietNanos);
                    }
                }
                if (stillOpen == 0 && lingerersDelivered()) {
                    return;
                }
                lingerRound(wake, stillOpen == 0 ? Long.MAX_VALUE : nextCheck);
            }
        } finally {
            endWait(wake);
        }
    }

    /**
     * Waits until {@code c}, closed, has delivered its bytes and FIN (or failed, or was torn down), driving
     * progress; false when {@code timeoutNanos} ran out first or the thread was interrupted.
     */
    boolean awaitOutputDone(FabricConnection c, long timeoutNanos) {
        Waitable done = new Waitable() {
            @Override
            public int readyOps() {
                return c.isOutputDone() ? 1 : 0;
            }

            @Override
            public boolean isClosedLocally() {
                return false;
            }
        };
        return await(done, 1, timeoutNanos) != 0;
    }

    @Override
    public long spinNanos() {
        return config.spinMicros() * 1000L;
    }

    /**
     * The shared wait of connections and listeners: progress, spin, arm, park, until {@code ready} reports a
     * non-zero subset of the operations, {@code isClosed} holds, the thread is interrupted or time runs out.
     */
    int await(Waitable target, int ops, long timeoutNanos) {
        int r = awaitReady(target, ops, timeoutNanos);
        // Woken by the exit hook closing the connections (or waiting when it began): stays, as on TCP.
        ExitLinger.blockUntilHalt();
        return r;
    }

    private int awaitReady(Waitable target, int ops, long timeoutNanos) {
        long start = System.nanoTime();
        long deadline = timeoutNanos == Long.MAX_VALUE ? Long.MAX_VALUE : start + timeoutNanos;
        progress();
        int r = readyOrClosed(target, ops);
        if (r != 0 || timeoutNanos <= 0) {
            return Math.max(r, 0);
        }
        long spinEnd = start + SpinWait.budget(spinNanos());
        for (int round = 0; System.nanoTime() - spinEnd < 0; round++) {
            progress();
            r = readyOrClosed(target, ops);
            if (r != 0) {
                return Math.max(r, 0);
            }
            SpinWait.pause(round);
        }
        ParkingWaiter w = ParkingWaiter.current();
        FabricConnection c = target instanceof FabricConnection ? (FabricConnection) target : null;
        if (c != null) {
            // Registered before the first re-check: a change of c from now on signals this thread.
            w.blockedOnConnection = true;
            c.addWaiter(w);
        }
        try {
            return awaitArmed(w, target, ops, deadline);
        } finally {
            if (c != null) {
                c.removeWaiter(w);
                w.blockedOnConnection = false;
            }
            endWait(w);
        }
    }

    /**
     * {@link #await}'s blocking part: arm, re-check, wait, progress, until ready, closed or out of time. A platform
     * thread that finds the engine's {@link DoorbellSelector} free waits there, on the peers' doorbells themselves;
     * otherwise (another thread holds it, a virtual thread, a fabric without wakeup channels) it parks and the
     * fabric relays its notification.
     */
    private int awaitArmed(ParkingWaiter w, Waitable target, int ops, long deadline) {
        boolean holder = !VirtualThreads.current() && doorbell.tryEnter(wakeupChannels);
        if (!holder) {
            return awaitArmed(w, target, ops, deadline, null);
        }
        try {
            return awaitArmed(w, target, ops, deadline, doorbell);
        } finally {
            doorbell.exit();
        }
    }

    private int awaitArmed(ParkingWaiter w, Waitable target, int ops, long deadline, DoorbellSelector d) {
        int r;
        for (;;) {
            if (Thread.currentThread().isInterrupted() || closed) {
                return 0;
            }
            // Cleared before registering: a signal from now on belongs to this round, and the re-check below
            // covers everything that happened before it.
            w.reset();
            List<SelectableChannel> watched = d == null ? List.of() : d.watch(wakeupChannels);
            if (arm(w, watched)) {
                r = readyOrClosed(target, ops);
                if (r != 0) {
                    return Math.max(r, 0);
                }
                // No periodic wakeup: an idle JVM stays idle. The fabric's one-shot notification (armed above),
                // a doorbell byte on a watched channel or a local close/flush request wakes this waiter.
                if (watched.isEmpty()) {
                    w.awaitSignal(this, deadline);
                } else {
                    w.awaitDoorbell(d, deadline);
                }
            }
            progress();
            r = readyOrClosed(target, ops);
            if (r != 0) {
                return Math.max(r, 0);
            }
            if (deadline != Long.MAX_VALUE && deadline - System.nanoTime() <= 0) {
                return 0;
            }
        }
    }

    /** The ready subset of {@code ops}, or -1 once the target was closed locally. */
    private static int readyOrClosed(Waitable target, int ops) {
        if (target.isClosedLocally()) {
            return -1;
        }
        return target.readyOps() & ops;
    }

    /** What {@link #await} waits on: a connection or a listener. */
    interface Waitable {
        int readyOps();

        boolean isClosedLocally();
    }

    /**
     * A thread's waiter: one per thread, reused for every wait. The signal is remembered in a flag, not only in
     * the thread's park permit: between registering and parking the thread may take locks of the fabric (arming a
     * loopback queue carries out posted work under queue-pair locks), and a contended {@code ReentrantLock}
     * consumes the permit, while the signal's sender has already dropped this waiter from the list.
     */
    private static final class ParkingWaiter implements Notifier {
        private static final ThreadLocal<ParkingWaiter> CURRENT = ThreadLocal.withInitial(ParkingWaiter::new);
        private final Thread thread = Thread.currentThread();
        private volatile boolean signalled;
        /** Blocked on one connection, which signals it on every change (see {@link #wakeWaiters}). */
        volatile boolean blockedOnConnection;
        /** The doorbell this thread selects on now, which a signal must wake; null while it parks. */
        private volatile DoorbellSelector selecting;

        static ParkingWaiter current() {
            return CURRENT.get();
        }

        /** Forgets earlier signals; called before the waiter registers for a new round. */
        void reset() {
            signalled = false;
        }

        @Override
        public void signal() {
            signalled = true;
            // Read after the flag is set, as the waiter sets it before reading the flag: one of the two sees it.
            DoorbellSelector d = selecting;
            if (d != null) {
                d.wakeup();
            }
            LockSupport.unpark(thread);
        }

        /**
         * Selects on {@code d} until signalled, a doorbell rang, interrupted or past {@code deadline}
         * ({@link Long#MAX_VALUE}: none).
         */
        void awaitDoorbell(DoorbellSelector d, long deadline) {
            selecting = d;
            try {
                while (!signalled && !thread.isInterrupted()) {
                    long millis = 0;
                    if (deadline != Long.MAX_VALUE) {
                        long left = deadline - System.nanoTime();
                        if (left <= 0) {
                            return;
                        }
                        // Rounded up: the selector's unit is the millisecond, and 0 would mean no limit.
                        millis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(left + 999_999));
                    }
                    if (d.select(millis)) {
                        return;
                    }
                }
            } finally {
                selecting = null;
            }
        }

        /**
         * Parks until signalled, interrupted or past {@code deadline} ({@link Long#MAX_VALUE}: none). A wakeup
         * without a signal (a stale permit, a spurious return) parks again.
         */
        void awaitSignal(Object blocker, long deadline) {
            while (!signalled && !thread.isInterrupted()) {
                if (deadline == Long.MAX_VALUE) {
                    LockSupport.park(blocker);
                } else {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return;
                    }
                    LockSupport.parkNanos(blocker, left);
                }
            }
        }
    }

    // -------------------------------------------------------------------------------------------------------------

    @Override
    public EngineStats stats() {
        return new EngineStats(connectionsOpened.get(), connectionsFailed.get(), bytesSent.get(), bytesReceived.get(),
            framesSent.get(), creditFramesSent.get(), creditStalls.get(), receiverNotReady.get(),
            protocolErrors.get(), inlineFramesSent.get());
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        List<FabricConnection> cs;
        List<FabricListener> ls;
        synchronized (setupLock) {
            if (closed) {
                return;
            }
            closed = true;
            cs = new ArrayList<>(connections);
            ls = new ArrayList<>(listeners);
        }
        ExitLinger.forget(this);
        for (FabricListener l : ls) {
            l.close();
        }
        progressLock.lock();
        try {
            for (FabricConnection c : cs) {
                c.destroy();
            }
            for (CompletionQueue cq : cqs) {
                cq.close();
            }
            events.close();
            pool.close();
        } finally {
            progressLock.unlock();
        }
        wakeWaiters();
        doorbell.close();
        closerDoorbell.close();
        Thread t = closer;
        if (t != null) {
            LockSupport.unpark(t);
        }
        if (ownsFabric) {
            try {
                fabric.close();
            } catch (IOException e) {
                LOG.warn("closing the {} fabric failed", fabric.name(), e);
            }
        }
    }

    @Override
    public String toString() {
        return "engine(" + fabric.name() + ")";
    }
}
