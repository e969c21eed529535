package io.rdmanio.core.fabric.disni.verbs;

import com.ibm.disni.util.MemoryUtils;
import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCReqNotify;
import com.ibm.disni.verbs.impl.NatObject;
import io.rdmanio.core.Logs;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.disni.DisniVerbs;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.nio.channels.Pipe;
import java.nio.channels.SelectableChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * The DiSNI-facing fabric: one device context and protection domain, one device completion queue feeding every
 * SPI completion queue, one rdma_cm event channel feeding every SPI event channel.
 *
 * <h2>Waiting for completions</h2>
 * The device queue is armed (ibv_req_notify_cq) while some SPI queue is armed or a connection is being set up, and
 * every drain first consumes a pending event of the completion channel (non-blocking), acknowledges it and re-arms
 * if still wanted. Two kinds of waiter see the channel: the completion thread, which blocks on it only while a
 * queue is armed without a watcher ({@link CompletionQueue#requestNotify(io.rdmanio.core.fabric.Notifier)}) or a
 * connection is being set up, and any JDK selector that registered {@link #wakeupChannel()}, a JDK pipe's read end
 * whose descriptor was made a duplicate of the completion channel's. A waiter that loses the event to another
 * drain is still told: that drain moved the completion into an armed queue, which runs its notifier.
 *
 * <p>Thread-safe. Locks: {@link #cqLock} guards the device completion queue, its armed state, the queue-pair table
 * and every SPI completion queue; {@link #waitLock} (a leaf) guards the completion thread's wake-up. See
 * {@link VerbsCmId} for the order with ids. Every ibv_get_cq_event runs under {@link #cqLock} except the
 * completion thread's blocking one, which then reports under it.
 */
final class VerbsFabric implements DisniVerbs {

    private static final Logger LOG = Logs.get(VerbsFabric.class);

    static final int POLL_BATCH = 32;
    /** Table slots: 16 bits of a work request id. */
    static final int MAX_QUEUE_PAIRS = 1 << 16;
    /** How long the fabric's threads block in the kernel before checking whether the fabric closed. */
    private static final int WAIT_SLICE_MILLIS = 500;
    private static final int[] INLINE_PROBES = {512, 256, 128, 64, 32, 0};

    private final InetAddress deviceAddress;
    private final int maxWr;
    private final int acceptInline;
    private final int retryCount;
    private final int rnrRetry;
    private final int timeoutMillis;

    private final RdmaEventChannel cmChannel;
    /** DiSNI's table of the channel's ids, made thread-safe; {@code null} if DiSNI's layout differs. */
    private final LockedIdMap idMap;
    private final RdmaCmId deviceId;
    private final IbvPd pd;
    private final IbvCompChannel compChannel;
    private final IbvCQ cq;
    private final int cqSize;
    private final IbvWC[] wcs = new IbvWC[POLL_BATCH];
    private final SVCPollCq pollCall;
    private final SVCReqNotify notifyCall;
    private final int maxInline;
    /** The completion channel as a JDK channel; {@code null} when it could not be made (see openWakeupChannel). */
    private final SelectableChannel wakeupChannel;
    /** Connections in setup: their completions must reach the fabric even when no queue is armed. */
    private final AtomicInteger setups = new AtomicInteger();
    private final AtomicLong completionThreadWakeups = new AtomicLong();

    private final AtomicInteger reservedCqe = new AtomicInteger();
    private final AtomicLong receiverNotReady = new AtomicLong();
    private final Map<RdmaCmId, VerbsCmId> ids = new ConcurrentHashMap<>();
    private final Thread cmThread;
    private final Thread cqThread;
    private volatile boolean closed;

    final Object cqLock = new Object();
    // ---- guarded by cqLock
    private final VerbsQueuePair[] table = new VerbsQueuePair[MAX_QUEUE_PAIRS];
    private final int[] generations = new int[MAX_QUEUE_PAIRS];
    private final boolean[] taken = new boolean[MAX_QUEUE_PAIRS];
    private int nextSlot;
    private boolean broken;
    /** ibv_req_notify_cq was called and its event not consumed yet. */
    private boolean deviceArmed;
    /** SPI queues armed, watched or not. */
    private int armedQueues;

    private final Object waitLock = new Object();
    // ---- guarded by waitLock
    /**
     * SPI queues armed without a watcher plus connections in setup: while positive the completion thread waits on
     * the device.
     */
    private int wanted;

    // ---- guarded by itself
    private final LinkedHashSet<Object> open = new LinkedHashSet<>();
    private boolean closing;

    private VerbsFabric(InetAddress deviceAddress, Map<String, String> settings) throws IOException {
        this.deviceAddress = deviceAddress;
        this.maxWr = intSetting(settings, "disni.maxWr", 1024, 1, 1 << 20);
        this.acceptInline = intSetting(settings, "disni.maxInline", 64, 0, 4096);
        this.retryCount = intSetting(settings, "disni.retryCount", 7, 0, 7);
        this.rnrRetry = intSetting(settings, "disni.rnrRetry", 3, 0, 7);
        this.timeoutMillis = intSetting(settings, "disni.timeoutMillis", 2000, 1, 600_000);
        int cqEntries = intSetting(settings, "disni.cqEntries", 65536, 256, 1 << 24);
        boolean offerWakeupChannel = booleanSetting(settings, "disni.wakeupChannel", true);

        RdmaEventChannel channel = RdmaEventChannel.createEventChannel();
        this.idMap = lockIdMap(channel);
        RdmaCmId device = null;
        IbvPd protection = null;
        IbvCompChannel completionChannel = null;
        IbvCQ deviceCq = null;
        try {
            device = channel.createId(RdmaCm.RDMA_PS_TCP);
            try {
                device.bindAddr(new InetSocketAddress(deviceAddress, 0));
            } catch (IOException e) {
                throw new IOException("the address " + deviceAddress.getHostAddress() + " is not on an RDMA device ("
                    + e.getMessage() + "): set -Drdmanio.disni.address to the address of the RDMA interface", e);
            }
            IbvContext context = device.getVerbs();
            protection = context.allocPd();
            completionChannel = context.createCompChannel();
            int size = cqEntries;
            IOException last = null;
            // Devices cap the size at 2^n or 2^n - 1: try both on the way down.
            boolean odd = false;
            while (deviceCq == null && size >= 256) {
                int attempt = odd ? size - 1 : size;
                try {
                    deviceCq = context.createCQ(completionChannel, attempt, 0);
                    size = attempt;
                } catch (IOException e) {
                    last = e;
                    if (odd) {
                        size /= 2;
                    }
                    odd = !odd;
                }
            }
            if (deviceCq == null) {
                throw new FabricException("the RDMA device refused a completion queue of 256 entries", last);
            }
            this.cqSize = size;
            this.cmChannel = channel;
            this.deviceId = device;
            this.pd = protection;
            this.compChannel = completionChannel;
            this.cq = deviceCq;
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new IbvWC();
            }
            this.pollCall = deviceCq.poll(wcs, wcs.length);
            this.notifyCall = deviceCq.reqNotification(false);
            this.maxInline = probeInline();
            if (offerWakeupChannel) {
                this.wakeupChannel = openWakeupChannel(completionChannel);
            } else {
                LOG.debug("rdmanio.disni.wakeupChannel=false: blocked selects are woken by the completion thread");
                this.wakeupChannel = null;
            }
        } catch (IOException | RuntimeException e) {
            destroyQuietly(channel, device, protection, completionChannel, deviceCq);
            throw e;
        }
        cmThread = new Thread(this::runConnectionManager, "rdmanio-disni-cm");
        cmThread.setDaemon(true);
        cqThread = new Thread(this::runCompletions, "rdmanio-disni-cq");
        cqThread.setDaemon(true);
        cmThread.start();
        cqThread.start();
        LOG.debug("disni fabric open on {}: completion queue {} entries, inline {} bytes, wakeup channel {}",
            deviceAddress, cqSize, maxInline, wakeupChannel != null);
    }

    /**
     * The completion channel as a channel of the JDK's default provider: a JDK pipe whose read end's descriptor is
     * replaced (dup3) by a duplicate of the completion channel's, and whose write end is closed. The JDK then owns
     * the duplicate: closing the channel closes only it. Needs {@code sun.nio.ch} (the JDK's provider and the
     * channel's descriptor number; exported to this loader by the agent or --add-exports, as DiSNI itself needs)
     * and libdisni's {@link VerbsNatives}; without either, {@code null} and every wakeup goes through the
     * completion thread.
     */
    private static SelectableChannel openWakeupChannel(IbvCompChannel channel) {
        if (!(channel instanceof NatObject)) {
            LOG.debug("DiSNI's completion channel has no native handle: blocked selects are woken by the "
                + "completion thread");
            return null;
        }
        Pipe pipe = null;
        try {
            SelectorProvider jdk = (SelectorProvider) Class.forName("sun.nio.ch.DefaultSelectorProvider")
                .getMethod("get").invoke(null);
            pipe = jdk.openPipe();
            int fd = (Integer) Class.forName("sun.nio.ch.SelChImpl").getMethod("getFDVal").invoke(pipe.source());
            int rc = VerbsNatives.dupCompChannel0(((NatObject) channel).getObjId(), fd);
            if (rc != 0) {
                throw new FabricException("dup3 of the completion channel failed: errno " + -rc);
            }
            pipe.sink().close();
            // The duplicate shares the channel's open file, which is non-blocking already: this only tells the JDK.
            pipe.source().configureBlocking(false);
            return pipe.source();
        } catch (ReflectiveOperationException | LinkageError | IOException | RuntimeException e) {
            Throwable cause = e instanceof InvocationTargetException && e.getCause() != null ? e.getCause() : e;
            LOG.debug("no wakeup channel for the completion channel ({}): blocked selects are woken by the "
                + "completion thread", cause.toString());
            if (pipe != null) {
                closeQuietly(pipe.source());
                closeQuietly(pipe.sink());
            }
            return null;
        }
    }

    private static void closeQuietly(java.nio.channels.Channel c) {
        try {
            c.close();
        } catch (IOException e) {
            LOG.trace("closing {} failed", c, e);
        }
    }

    /**
     * DiSNI's event channel keeps its ids in a plain HashMap that the connection-manager thread reads (and adds
     * requests to) while other threads add ids, and never removes a destroyed id. This map is safe to share and
     * lets the fabric drop an id when it is destroyed.
     */
    private static final class LockedIdMap extends HashMap<Object, Object> {
        private static final long serialVersionUID = 1L;

        @Override
        public synchronized Object get(Object key) {
            return super.get(key);
        }

        @Override
        public synchronized Object put(Object key, Object value) {
            return super.put(key, value);
        }

        @Override
        public synchronized Object remove(Object key) {
            return super.remove(key);
        }
    }

    private static LockedIdMap lockIdMap(RdmaEventChannel channel) {
        try {
            Field f = channel.getClass().getDeclaredField("idMap");
            f.setAccessible(true);
            LockedIdMap map = new LockedIdMap();
            f.set(channel, map);
            return map;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.debug("DiSNI's event channel has no id table to make thread-safe; ids are created under a lock", e);
            return null;
        }
    }

    /** Drops a destroyed id from DiSNI's table. */
    void dropFromDisni(RdmaCmId rdma) {
        if (idMap != null && rdma instanceof NatObject) {
            idMap.remove(((NatObject) rdma).getObjId());
        }
    }

    static VerbsFabric open(InetAddress deviceAddress, Map<String, String> settings) throws IOException {
        return new VerbsFabric(Objects.requireNonNull(deviceAddress, "deviceAddress"),
            settings == null ? Map.of() : settings);
    }

    private static boolean booleanSetting(Map<String, String> settings, String key, boolean dflt)
        throws IOException {
        String v = settings.get(key);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        switch (v.trim()) {
            case "true":
                return true;
            case "false":
                return false;
            default:
                throw new IOException("rdmanio." + key + " must be true or false: '" + v + "'");
        }
    }

    private static int intSetting(Map<String, String> settings, String key, int dflt, int min, int max)
        throws IOException {
        String v = settings.get(key);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n < min || n > max) {
                throw new IOException("rdmanio." + key + " must be between " + min + " and " + max + ": " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IOException("rdmanio." + key + " must be a whole number: '" + v + "'", e);
        }
    }

    /** The largest inline payload the device takes, found by creating throwaway queue pairs on the device id. */
    private int probeInline() {
        for (int inline : INLINE_PROBES) {
            try {
                IbvQP probe = deviceId.createQP(pd, qpAttributes(this, 2, 2, inline));
                if (probe != null) {
                    deviceId.destroyQP();
                    return inline;
                }
            } catch (IOException e) {
                LOG.trace("the device refused {} bytes of inline data", inline, e);
            }
        }
        return 0;
    }

    static IbvQPInitAttr qpAttributes(VerbsFabric fabric, int sendWr, int recvWr, int inline) {
        IbvQPInitAttr attr = new IbvQPInitAttr();
        attr.cap().setMax_send_wr(sendWr);
        attr.cap().setMax_recv_wr(recvWr);
        attr.cap().setMax_send_sge(1);
        attr.cap().setMax_recv_sge(1);
        attr.cap().setMax_inline_data(inline);
        attr.setQp_type(IbvQP.IBV_QPT_RC);
        attr.setSend_cq(fabric.cq);
        attr.setRecv_cq(fabric.cq);
        return attr;
    }

    // -------------------------------------------------------------------------------------------------------------
    // DisniVerbs

    @Override
    public String name() {
        return "disni";
    }

    @Override
    public InetAddress deviceAddress() {
        return deviceAddress;
    }

    @Override
    public int maxInlineData() {
        return maxInline;
    }

    @Override
    public long receiverNotReadyCount() {
        return receiverNotReady.get();
    }

    void receiverNotReady() {
        receiverNotReady.incrementAndGet();
    }

    @Override
    public boolean hasWakeupChannel() {
        return wakeupChannel != null;
    }

    @Override
    public long completionThreadWakeups() {
        return completionThreadWakeups.get();
    }

    /** The JDK channel every SPI queue of this fabric offers as its wakeup channel, or {@code null}. */
    SelectableChannel wakeupChannel() {
        return wakeupChannel;
    }

    IbvPd pd() {
        return pd;
    }

    int maxWr() {
        return maxWr;
    }

    /** Inline data of the queue pairs a listener creates for incoming connections. */
    int acceptInline() {
        return Math.min(acceptInline, maxInline);
    }

    int timeoutMillis() {
        return timeoutMillis;
    }

    RdmaConnParam connParam() throws IOException {
        RdmaConnParam p = new RdmaConnParam();
        p.setRetry_count((byte) retryCount);
        p.setRnr_retry_count((byte) rnrRetry);
        return p;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, int access) throws IOException {
        Objects.requireNonNull(buffer, "buffer");
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("only direct buffers can be registered: a heap buffer may move");
        }
        if (buffer.isReadOnly()) {
            throw new IllegalArgumentException("a read-only buffer cannot be registered");
        }
        int known = MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_WRITE | MemoryRegion.REMOTE_READ;
        if ((access & ~known) != 0) {
            throw new IllegalArgumentException("unknown access bits 0x" + Integer.toHexString(access & ~known));
        }
        if ((access & MemoryRegion.REMOTE_WRITE) != 0 && (access & MemoryRegion.LOCAL_WRITE) == 0) {
            throw new IllegalArgumentException("REMOTE_WRITE access requires LOCAL_WRITE too (as in verbs)");
        }
        if (!buffer.hasRemaining()) {
            throw new IllegalArgumentException("cannot register an empty range (position == limit)");
        }
        ensureOpen();
        ByteBuffer memory = buffer.slice();
        long address = MemoryUtils.getAddress(memory);
        IbvMr mr;
        try {
            mr = pd.regMr(address, memory.capacity(), VerbsQueuePair.verbsAccess(access)).execute().free().getMr();
        } catch (IOException e) {
            throw new FabricException("ibv_reg_mr of " + memory.capacity() + " bytes failed: " + e.getMessage()
                + " (is the locked-memory limit, ulimit -l, high enough?)", e);
        }
        VerbsMemoryRegion region = new VerbsMemoryRegion(this, memory, mr, address, access);
        opened(region);
        return region;
    }

    @Override
    public CompletionQueue createCompletionQueue(int entries) throws IOException {
        if (entries < 1 || entries > cqSize) {
            throw new FabricException("completion queue entries must be between 1 and " + cqSize
                + " (the device queue; rdmanio.disni.cqEntries): " + entries);
        }
        ensureOpen();
        VerbsCompletionQueue q = new VerbsCompletionQueue(this, entries);
        opened(q);
        return q;
    }

    @Override
    public EventChannel createEventChannel() throws IOException {
        ensureOpen();
        VerbsEventChannel c = new VerbsEventChannel(this);
        opened(c);
        return c;
    }

    @Override
    public CmId createId(EventChannel events) throws IOException {
        Objects.requireNonNull(events, "events");
        if (!(events instanceof VerbsEventChannel)) {
            throw new IllegalArgumentException("the event channel must come from this disni fabric");
        }
        ensureOpen();
        RdmaCmId rdma;
        try {
            if (idMap != null) {
                rdma = cmChannel.createId(RdmaCm.RDMA_PS_TCP);
            } else {
                synchronized (cmChannel) {
                    rdma = cmChannel.createId(RdmaCm.RDMA_PS_TCP);
                }
            }
        } catch (IOException e) {
            throw new FabricException("rdma_create_id failed: " + e.getMessage(), e);
        }
        VerbsCmId id = new VerbsCmId(this, (VerbsEventChannel) events, rdma, null);
        remember(rdma, id);
        opened(id);
        return id;
    }

    private void ensureOpen() throws FabricException {
        if (closed) {
            throw new FabricException("the disni fabric is closed");
        }
    }

    void remember(RdmaCmId rdma, VerbsCmId id) {
        ids.put(rdma, id);
    }

    void forget(VerbsCmId id) {
        ids.remove(id.rdma, id);
    }

    private void opened(Object o) {
        synchronized (open) {
            open.add(o);
        }
    }

    void closed(Object o) {
        synchronized (open) {
            open.remove(o);
        }
    }

    // -------------------------------------------------------------------------------------------------------------
    // Device completion queue capacity and the queue-pair table.

    void reserveCqe(int n) throws FabricException {
        int now = reservedCqe.addAndGet(n);
        if (now > cqSize) {
            reservedCqe.addAndGet(-n);
            throw new FabricException("the device completion queue of " + cqSize + " entries cannot hold the " + n
                + " requests of another queue pair (" + (now - n) + " reserved): raise rdmanio.disni.cqEntries "
                + "or lower the queue depths");
        }
    }

    void releaseCqe(int n) {
        reservedCqe.addAndGet(-n);
    }

    /** Takes a table slot; returns {@code generation << 32 | slot}. */
    long registerQueuePair() throws FabricException {
        synchronized (cqLock) {
            for (int k = 0; k < MAX_QUEUE_PAIRS; k++) {
                int s = (nextSlot + k) & (MAX_QUEUE_PAIRS - 1);
                if (!taken[s]) {
                    taken[s] = true;
                    nextSlot = s + 1;
                    int g = (generations[s] + 1) & VerbsQueuePair.GENERATION_MASK;
                    generations[s] = g;
                    return ((long) g << 32) | s;
                }
            }
        }
        throw new FabricException("the disni fabric has " + MAX_QUEUE_PAIRS + " queue pairs already");
    }

    void publishQueuePair(int slot, VerbsQueuePair q) {
        synchronized (cqLock) {
            table[slot] = q;
        }
    }

    void unregisterQueuePair(int slot, VerbsQueuePair q) {
        synchronized (cqLock) {
            if (q == null || table[slot] == q) {
                table[slot] = null;
                taken[slot] = false;
            }
        }
    }

    // -------------------------------------------------------------------------------------------------------------
    // Completions.

    /**
     * Moves every completion from the device queue to its SPI queue or setup handler, then consumes the completion
     * channel's event (the readiness a waiter's selector saw) and re-arms the device while a queue is armed or a
     * connection is in setup.
     *
     * <p>The event is looked for (a non-blocking read, one system call) only while the device is armed and only
     * when completions came, or when {@code waiting}: a caller about to wait (arming) or the completion thread. A
     * poll that finds nothing thus costs no system call, even while another thread waits armed; an event written
     * just after its completion was polled stays readable until the woken waiter arms again, which consumes it.
     */
    void drainLocked(boolean waiting) throws IOException {
        assert Thread.holdsLock(cqLock);
        if (broken) {
            throw new FabricException("the device completion queue failed");
        }
        int n = pollDeviceLocked();
        if (deviceArmed && (waiting || n > 0) && compChannel.getCqEvent(cq, 0)) {
            eventConsumedLocked();
        }
        if (!deviceArmed && (armedQueues > 0 || setups.get() > 0)) {
            armDeviceLocked();
        }
    }

    /** Arms the device queue unless it is armed (under the completion lock). */
    void ensureDeviceArmedLocked() throws IOException {
        assert Thread.holdsLock(cqLock);
        if (!deviceArmed) {
            armDeviceLocked();
        }
    }

    private void armDeviceLocked() throws IOException {
        try {
            notifyCall.execute();
        } catch (IOException e) {
            broken = true;
            throw new FabricException("ibv_req_notify_cq failed: " + e.getMessage(), e);
        }
        deviceArmed = true;
        // Completions that arrived before the arm raise no event.
        pollDeviceLocked();
    }

    private void eventConsumedLocked() throws IOException {
        // Disarmed by the event whether or not the acknowledgement goes through.
        deviceArmed = false;
        cq.ackEvents(1);
    }

    /** Moves what the device queue holds; returns how many completions that was. */
    private int pollDeviceLocked() throws IOException {
        int total = 0;
        for (;;) {
            int n;
            try {
                n = pollCall.execute().getPolls();
            } catch (IOException e) {
                broken = true;
                throw new FabricException("ibv_poll_cq failed: " + e.getMessage(), e);
            }
            if (n < 0) {
                broken = true;
                throw new FabricException("ibv_poll_cq failed: " + n);
            }
            for (int i = 0; i < n; i++) {
                dispatch(wcs[i]);
            }
            total += n;
            if (n < wcs.length) {
                return total;
            }
        }
    }

    private void dispatch(IbvWC wc) {
        long wrId = wc.getWr_id();
        int s = (int) (wrId >>> 32) & (MAX_QUEUE_PAIRS - 1);
        int g = (int) (wrId >>> 48) & VerbsQueuePair.GENERATION_MASK;
        VerbsQueuePair q = table[s];
        if (q == null || generations[s] != g) {
            return; // a late completion of a destroyed queue pair
        }
        q.complete(wrId, wc);
    }

    /** An SPI queue overflowed (under the completion lock): every queue pair reporting to it fails. */
    void overrun(VerbsCompletionQueue q) {
        for (VerbsQueuePair p : table) {
            if (p != null && p.uses(q)) {
                p.markError("completion queue overrun");
                p.id.failAsync("completion queue overrun");
            }
        }
    }

    /** An SPI queue was armed (under the completion lock); {@code relayed}: no watcher of the wakeup channel. */
    void armed(boolean relayed) {
        assert Thread.holdsLock(cqLock);
        armedQueues++;
        if (relayed) {
            want(1);
        }
    }

    /** An armed, watched SPI queue was armed again without a watcher (under the completion lock). */
    void relayed() {
        want(1);
    }

    /** An armed SPI queue's relay was withdrawn; the queue stays armed (under the completion lock). */
    void unrelayed() {
        assert Thread.holdsLock(cqLock);
        want(-1);
    }

    /** An armed SPI queue fired or closed (under the completion lock). */
    void disarmed(boolean relayed) {
        assert Thread.holdsLock(cqLock);
        armedQueues--;
        if (relayed) {
            want(-1);
        }
    }

    void setupBegan() {
        setups.incrementAndGet();
        want(1);
    }

    void setupEnded() {
        setups.decrementAndGet();
        want(-1);
    }

    private void want(int delta) {
        synchronized (waitLock) {
            wanted += delta;
            if (wanted > 0) {
                waitLock.notifyAll();
            }
        }
    }

    /**
     * The completion thread: parked while no queue is armed without a watcher and no connection is being set up;
     * otherwise it arms the device queue, drains what arrived before the arm, and blocks on the completion channel.
     */
    private void runCompletions() {
        try {
            boolean waited = false;
            while (!closed) {
                synchronized (waitLock) {
                    while (wanted <= 0 && !closed) {
                        waited = true;
                        waitLock.wait();
                    }
                }
                if (closed) {
                    return;
                }
                if (waited) {
                    waited = false;
                    completionThreadWakeups.incrementAndGet();
                }
                synchronized (cqLock) {
                    drainLocked(true);
                    ensureDeviceArmedLocked();
                }
                if (compChannel.getCqEvent(cq, WAIT_SLICE_MILLIS)) {
                    synchronized (cqLock) {
                        // Taken outside the lock: until now drains believed the device armed, and re-armed nothing.
                        eventConsumedLocked();
                        drainLocked(true);
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                LOG.error("the disni fabric's completion thread failed; armed queues will not be woken", e);
            }
        }
    }

    /** The connection-manager thread: blocked in the kernel until an event arrives (or the fabric closes). */
    private void runConnectionManager() {
        while (!closed) {
            RdmaCmEvent event;
            try {
                event = cmChannel.getCmEvent(WAIT_SLICE_MILLIS);
            } catch (IOException | RuntimeException e) {
                if (!closed) {
                    LOG.error("the disni fabric's connection-manager thread failed", e);
                }
                return;
            }
            if (event == null) {
                continue;
            }
            int type = event.getEvent();
            RdmaCmId id = event.getConnIdPriv();
            RdmaCmId listenId = event.getListenIdPriv();
            try {
                event.ackEvent();
            } catch (IOException ignored) {
                // libdisni acknowledges inside getCmEvent already
            }
            try {
                if (type == RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST.ordinal()) {
                    VerbsCmId listener = listenId == null ? null : ids.get(listenId);
                    if (listener == null) {
                        dropFromDisni(id);
                        id.destroyId();
                    } else {
                        listener.onConnectRequest(id);
                    }
                } else {
                    VerbsCmId target = id == null ? null : ids.get(id);
                    if (target != null) {
                        target.onEvent(type);
                    }
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("handling connection-manager event {} failed", type, e);
            }
        }
    }

    // -------------------------------------------------------------------------------------------------------------

    @Override
    public void close() {
        List<Object> objects;
        synchronized (open) {
            if (closing) {
                return;
            }
            closing = true;
            objects = new ArrayList<>(open);
        }
        // Ids first (they disconnect and destroy their queue pairs), then queues, channels and regions.
        for (Object o : objects) {
            if (o instanceof VerbsCmId) {
                ((VerbsCmId) o).close();
            }
        }
        closed = true;
        synchronized (waitLock) {
            waitLock.notifyAll();
        }
        for (Object o : objects) {
            if (!(o instanceof VerbsCmId)) {
                try {
                    ((AutoCloseable) o).close();
                } catch (Exception e) {
                    LOG.debug("closing {} failed", o, e);
                }
            }
        }
        join(cmThread);
        join(cqThread);
        if (wakeupChannel != null) {
            // Closes the duplicate once no selector holds it; the completion channel itself goes below.
            closeQuietly(wakeupChannel);
        }
        synchronized (cqLock) {
            pollCall.free();
            notifyCall.free();
        }
        destroyQuietly(cmChannel, deviceId, pd, compChannel, cq);
    }

    private static void join(Thread t) {
        try {
            t.join(4L * WAIT_SLICE_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void destroyQuietly(RdmaEventChannel channel, RdmaCmId device, IbvPd protection,
                                       IbvCompChannel completionChannel, IbvCQ deviceCq) {
        try {
            if (deviceCq != null) {
                deviceCq.destroyCQ();
            }
            if (completionChannel != null) {
                completionChannel.destroyCompChannel();
            }
            if (protection != null) {
                protection.deallocPd();
            }
            if (device != null) {
                device.destroyId();
            }
            channel.destroyEventChannel();
        } catch (Exception e) {
            LOG.debug("tearing down the disni fabric failed", e);
        }
    }

    @Override
    public String toString() {
        return "disni fabric on " + deviceAddress.getHostAddress();
    }
}
