package io.rdmanio.core.fabric.loopback;

import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.MemoryRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A strict in-JVM model of RDMA verbs: the fabric the engine is tested on. It fails exactly where hardware
 * without receiver-not-ready retry would, so a flow-control bug fails a test instead of hiding.
 *
 * <h2>The model's rules</h2>
 * <ul>
 *   <li><b>Addressing.</b> One address space per JVM, shared by every loopback fabric: ids bind to
 *       {@link java.net.InetSocketAddress}es; port 0 picks a free port (32768-60999); an address in use gives
 *       {@link java.net.BindException}; a wildcard listener (0.0.0.0 or ::) accepts connects to any address with
 *       its port. An unbound active id gets 127.0.0.1 and a free port at connect.</li>
 *   <li><b>Setup.</b> A connect reaches the listener's channel as CONNECT_REQUEST carrying a new id (whose
 *       events also arrive on the listener's channel) and a read-only copy of the private data (at most
 *       {@value io.rdmanio.core.fabric.CmId#MAX_PRIVATE_DATA} bytes). Accept gives ESTABLISHED on both sides
 *       (the client's carries the accept's private data); reject gives the client REJECTED with the reject's
 *       private data. No listener, a full backlog, or a listener closed before accepting give REJECTED with empty
 *       private data and a reason.</li>
 *   <li><b>Memory.</b> Only direct buffers register. Each region gets a unique synthetic address range and
 *       distinct lkey and rkey. A deregistered region is invalid for every later use.</li>
 *   <li><b>Receives.</b> A receive must lie inside a valid LOCAL_WRITE region; more than {@code maxRecvWr}
 *       posted receives, or a post on a queue pair in error, throws.</li>
 *   <li><b>Sends.</b> More than {@code maxSendWr} outstanding requests throws. A send slot frees
 *       only when its completion, or that of a later signaled request, is polled from the send queue, so an
 *       engine that never signals fills up. Memory outside a valid region fails the request with
 *       LOC_PROT_ERR. INLINE copies at post time (at most {@code maxInlineData} bytes); otherwise the payload
 *       is read when the request is carried out, which is when the sender's send queue or the receiver's receive
 *       queue is next polled or armed: memory reused before the completion is caught as corrupt data.</li>
 *   <li><b>Delivery.</b> A send takes the peer's oldest posted receive. None posted: RNR_RETRY_EXC_ERR at the
 *       sender and {@link #receiverNotReadyCount()} counts it. Larger than the receive: LOC_LEN_ERR at the
 *       receiver, REM_INV_REQ_ERR at the sender.</li>
 *   <li><b>Errors end the connection.</b> Any error completion puts both queue pairs in the error state,
 *       completes everything outstanding on both (sends and posted receives, signaled or not) with
 *       WR_FLUSH_ERR, and gives both ids DISCONNECTED, as does {@link CmId#disconnect()}.</li>
 *   <li><b>Completion queues.</b> Completions arrive only through the queue pair's completion queues, in order
 *       per queue pair. Holding more than {@code entries} is an overrun: every queue pair on that queue fails
 *       and {@code poll} throws from then on.</li>
 *   <li><b>Notification.</b> Notifiers are one-shot, fire when something is added after arming (at once if
 *       something is pending), and run outside every fabric lock.</li>
 *   <li><b>Faults.</b> {@link #faults()} delays, batches and fails completions, drops connections and freezes
 *       receivers, deterministically from a seed, without bending the rules above.</li>
 * </ul>
 *
 * <p>Thread-safe. Lock order: the connection-manager lock, then queue-pair locks (lower number first), then
 * completion-queue locks, then event-channel locks. The data path takes one connection's locks; posting
 * takes one queue pair's lock. Nothing allocates per work request.
 */
public final class LoopbackFabric implements Fabric {

    /** Regions are spaced so that no range, even one overrunning its region, reaches the next. */
    private static final long REGION_ALIGN = 1L << 20;
    private static final AtomicLong NEXT_ADDRESS = new AtomicLong(0x7e00_0000_0000L);
    private static final AtomicInteger NEXT_KEY = new AtomicInteger();
    private static final int KEY_SALT = ThreadLocalRandom.current().nextInt();

    private final LoopbackFaults faults;
    private final AtomicLong receiverNotReady = new AtomicLong();
    /** Live regions, copied on write: closed with the fabric. */
    private volatile LoopbackMemoryRegion[] regions = new LoopbackMemoryRegion[0];

    // ---- guarded by this
    private final Map<Integer, LoopbackQueuePair> queuePairs = new HashMap<>();
    private final LinkedHashSet<Object> open = new LinkedHashSet<>();
    private boolean closed;
    private volatile int inlineOffered;

    LoopbackFabric(long seed) {
        this.faults = new LoopbackFaults(this, seed);
    }

    /** Opens a loopback fabric whose fault injector starts from {@code seed}; the same as through the provider. */
    public static LoopbackFabric open(long seed) {
        return new LoopbackFabric(seed);
    }

    @Override
    public String name() {
        return LoopbackFabricProvider.NAME;
    }

    /** The fault injector of this fabric. */
    public LoopbackFaults faults() {
        return faults;
    }

    /**
     * 0 unless {@link #offerInline} raised it: by default the engine stages every frame in registered memory on
     * this fabric, as on a device whose inline limit is smaller than a frame.
     */
    @Override
    public int maxInlineData() {
        return inlineOffered;
    }

    /**
     * Offers inline sends of up to {@code bytes} (at most 65536) to engines opened after this call, so that the
     * engine's inline path runs under the same strictness and faults as its staged one.
     */
    public void offerInline(int bytes) {
        if (bytes < 0 || bytes > LoopbackQueuePair.MAX_INLINE) {
            throw new IllegalArgumentException("inline limit must be between 0 and " + LoopbackQueuePair.MAX_INLINE
                + ": " + bytes);
        }
        inlineOffered = bytes;
    }

    /** How many times a send arrived where no receive was posted, on this fabric's connections. */
    public long receiverNotReadyCount() {
        return receiverNotReady.get();
    }

    void receiverNotReady() {
        receiverNotReady.incrementAndGet();
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
        ByteBuffer memory = buffer.slice();
        long span = (memory.capacity() + REGION_ALIGN - 1) / REGION_ALIGN * REGION_ALIGN + REGION_ALIGN;
        long address = NEXT_ADDRESS.getAndAdd(span);
        int k = NEXT_KEY.getAndAdd(2);
        LoopbackMemoryRegion region = new LoopbackMemoryRegion(this, memory, address, key(k), key(k + 1), access);
        synchronized (this) {
            ensureOpen();
            LoopbackMemoryRegion[] now = Arrays.copyOf(regions, regions.length + 1);
            now[now.length - 1] = region;
            regions = now;
        }
        return region;
    }

    /** Distinct for distinct counters (an odd multiplier is a bijection on 32 bits), and not sequential. */
    private static int key(int counter) {
        int x = counter * 0x9E3779B1;
        return (x ^ (x >>> 15)) ^ KEY_SALT;
    }

    synchronized void deregistered(LoopbackMemoryRegion region) {
        LoopbackMemoryRegion[] now = regions;
        for (int i = 0; i < now.length; i++) {
            if (now[i] == region) {
                LoopbackMemoryRegion[] less = new LoopbackMemoryRegion[now.length - 1];
                System.arraycopy(now, 0, less, 0, i);
                System.arraycopy(now, i + 1, less, i, now.length - i - 1);
                regions = less;
                return;
            }
        }
    }

    @Override
    public CompletionQueue createCompletionQueue(int entries) throws IOException {
        if (entries < 1 || entries > LoopbackQueuePair.MAX_WR * 4) {
            throw new FabricException("completion queue entries must be between 1 and " + LoopbackQueuePair.MAX_WR * 4
                + ": " + entries);
        }
        LoopbackCompletionQueue cq = new LoopbackCompletionQueue(this, entries);
        opened(cq);
        return cq;
    }

    @Override
    public EventChannel createEventChannel() throws IOException {
        LoopbackEventChannel channel = new LoopbackEventChannel(this);
        opened(channel);
        return channel;
    }

    @Override
    public CmId createId(EventChannel events) throws IOException {
        if (!(events instanceof LoopbackEventChannel channel) || channel.fabric != this) {
            throw new IllegalArgumentException("the event channel must come from this loopback fabric");
        }
        LoopbackCmId id = new LoopbackCmId(this, channel);
        opened(id);
        return id;
    }

    synchronized void opened(Object object) throws FabricException {
        ensureOpen();
        open.add(object);
        if (object instanceof LoopbackQueuePair qp) {
            queuePairs.put(qp.qpNum(), qp);
        }
    }

    synchronized void closed(Object object) {
        open.remove(object);
        if (object instanceof LoopbackQueuePair qp) {
            queuePairs.remove(qp.qpNum());
        }
    }

    synchronized LoopbackQueuePair queuePair(int qpNum) {
        return queuePairs.get(qpNum);
    }

    /** The live queue pairs, by number. */
    synchronized List<LoopbackQueuePair> queuePairs() {
        List<LoopbackQueuePair> list = new ArrayList<>(queuePairs.values());
        list.sort(Comparator.comparingInt(LoopbackQueuePair::qpNum));
        return list;
    }

    private void ensureOpen() throws FabricException {
        if (closed) {
            throw new FabricException("the loopback fabric is closed");
        }
    }

    /** Closes every id (disconnecting it), then the completion queues, channels and regions. */
    @Override
    public void close() {
        List<Object> all;
        LoopbackMemoryRegion[] live;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            all = new ArrayList<>(open);
            live = regions;
        }
        for (Object o : all) {
            if (o instanceof LoopbackCmId id) {
                id.close();
            }
        }
        for (Object o : all) {
            if (o instanceof LoopbackCompletionQueue cq) {
                cq.close();
            } else if (o instanceof LoopbackEventChannel channel) {
                channel.close();
            }
        }
        for (LoopbackMemoryRegion region : live) {
            region.close();
        }
    }

    @Override
    public String toString() {
        return "loopback fabric";
    }
}
