package io.rdmanio.core.fabric.disni.verbs;

import com.ibm.disni.util.MemBuf;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import io.rdmanio.core.Logs;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;

/**
 * A reliable-connected queue pair on the fabric's device completion queue.
 *
 * <h2>Work request ids</h2>
 * The id a request carries on the device is not the engine's: it names the queue pair and the request's place in
 * its queue, so that every completion, including error and flush completions whose opcode the device leaves
 * undefined, reaches the right SPI queue, frees the right number of send slots and hands back the engine's id:
 * <pre>
 *   bit 63      receive (1) or send (0)
 *   bit 62      the fabric's own setup message
 *   bits 48-61  generation of the table slot (a stale completion of a destroyed queue pair is dropped)
 *   bits 32-47  table slot
 *   bits 0-31   sequence number of the request in its queue
 * </pre>
 *
 * <h2>Posting</h2>
 * One stateful send and one receive call of DiSNI are built per queue pair and rewritten in place for every post.
 * DiSNI 2.1's in-place modifiers cover the send's id, flags and scatter entry, but nothing of a receive; its
 * fields are written into the call's own command buffer, at offsets checked once against sentinel values when the
 * call is built.
 *
 * <p>Thread-safe: posting is serialized by {@link #postLock}; completion bookkeeping runs under the fabric's
 * completion lock. Posting never allocates.
 */
final class VerbsQueuePair implements QueuePair {

    private static final Logger LOG = Logs.get(VerbsQueuePair.class);

    static final long RECV_BIT = 1L << 63;
    static final long INTERNAL_BIT = 1L << 62;
    static final int GENERATION_MASK = 0x3fff;
    private static final byte OP_INTERNAL = -1;

    /* DiSNI's receive request is 32 bytes and its scatter entry follows: address, length, lkey. */
    private static final int RECV_WR_ID_OFFSET = 0;
    private static final int RECV_SGE_OFFSET = 32;

    private static final long SENTINEL_ADDRESS = 0x5EED_0000_0BADL;
    private static final int SENTINEL_LENGTH = 0x00C0_FFEE;
    private static final int SENTINEL_KEY = 0x7A11_5EED;
    private static final long SENTINEL_WR_ID = 0x0123_4567_89AB_CDEFL;

    final VerbsFabric fabric;
    final VerbsCmId id;
    private final IbvQP qp;
    final int qpNum;
    final int slot;
    private final long tag;
    /** Request depths as created on the device, one more than the engine may use (the setup message). */
    final int capSend;
    final int capRecv;
    final int capInline;
    private final int sendMask;
    private final int recvMask;
    private final long[] sendWrIds;
    private final byte[] sendOps;
    private final long[] recvWrIds;
    private final boolean[] recvInternal;
    /** The setup message buffers: receive at 0, send at {@link SetupDescriptor#LENGTH}. */
    private final VerbsMemoryRegion setup;
    final ByteBuffer setupBuffer;

    private final SVCPostSend sendCall;
    private final SVCPostSend.SendWRMod sendWr;
    private final SVCPostSend.SgeMod sendSge;
    private final SVCPostRecv recvCall;
    private final ByteBuffer recvCommand;

    final Object postLock = new Object();

    // ---- guarded by postLock
    private int sendPosted;
    private int recvPosted;

    // ---- written under the fabric's completion lock, read by posters
    private volatile int sendCompleted;
    private volatile int recvCompleted;
    private final AtomicInteger internalSends = new AtomicInteger();
    private final AtomicInteger internalRecvs = new AtomicInteger();
    private volatile boolean error;
    private volatile String errorCause;
    private volatile boolean failing;

    // ---- set once by bind (under the id's lock) before the engine sees the queue pair
    private volatile VerbsCompletionQueue sendCq;
    private volatile VerbsCompletionQueue recvCq;
    private volatile int maxSendWr;
    private volatile int maxRecvWr;
    private volatile int maxInline;
    private volatile boolean destroyed;
    /**
     * Set by the id (under its lock) once the SPI connection is up, before ESTABLISHED is delivered. The device queue
     * pair is ready to send earlier, while the setup messages are exchanged; an engine send then would reach a peer
     * that has posted no receive for it, so sends are refused until now, as the software fabrics refuse them.
     */
    private volatile boolean established;
    /** Device completion-queue entries this queue pair holds: its setup messages, then the engine's depths. */
    private int reservedCqe;

    private VerbsQueuePair(VerbsFabric fabric, VerbsCmId id, IbvQP qp, int slot, int generation, int capSend,
                           int capRecv, int capInline, VerbsMemoryRegion setup) throws IOException {
        this.fabric = fabric;
        this.id = id;
        this.qp = qp;
        this.qpNum = qp.getQp_num();
        this.slot = slot;
        this.tag = ((long) (generation & GENERATION_MASK) << 48) | ((long) slot << 32);
        this.capSend = capSend;
        this.capRecv = capRecv;
        this.capInline = capInline;
        int sendRing = Integer.highestOneBit(Math.max(1, capSend - 1) * 2);
        int recvRing = Integer.highestOneBit(Math.max(1, capRecv - 1) * 2);
        this.sendMask = sendRing - 1;
        this.recvMask = recvRing - 1;
        this.sendWrIds = new long[sendRing];
        this.sendOps = new byte[sendRing];
        this.recvWrIds = new long[recvRing];
        this.recvInternal = new boolean[recvRing];
        this.setup = setup;
        this.setupBuffer = setup.buffer().order(SetupDescriptor.ORDER);

        sendCall = qp.postSend(List.of(sendRequest()), null);
        sendWr = sendCall.getWrMod(0);
        sendSge = sendWr.getSgeMod(0);
        IbvSge sge = new IbvSge();
        sge.setAddr(SENTINEL_ADDRESS);
        sge.setLength(SENTINEL_LENGTH);
        sge.setLkey(SENTINEL_KEY);
        IbvRecvWR recv = new IbvRecvWR();
        recv.setWr_id(SENTINEL_WR_ID);
        recv.setSg_list(new LinkedList<>(List.of(sge)));
        recv.setNum_sge(1);
        recvCall = qp.postRecv(List.of(recv), null);
        recvCommand = commandBuffer(recvCall);
        if (recvCommand.getLong(RECV_WR_ID_OFFSET) != SENTINEL_WR_ID
            || recvCommand.getLong(RECV_SGE_OFFSET) != SENTINEL_ADDRESS
            || recvCommand.getInt(RECV_SGE_OFFSET + 8) != SENTINEL_LENGTH
            || recvCommand.getInt(RECV_SGE_OFFSET + 12) != SENTINEL_KEY) {
            throw new FabricException("DiSNI's receive request layout is not DiSNI 2.1's");
        }
    }

    private static IbvSendWR sendRequest() {
        IbvSge sge = new IbvSge();
        sge.setAddr(SENTINEL_ADDRESS);
        sge.setLength(SENTINEL_LENGTH);
        sge.setLkey(SENTINEL_KEY);
        IbvSendWR wr = new IbvSendWR();
        wr.setWr_id(SENTINEL_WR_ID);
        wr.setOpcode(IbvSendWR.IBV_WR_SEND);
        wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
        wr.setSg_list(new LinkedList<>(List.of(sge)));
        wr.setNum_sge(1);
        return wr;
    }

    /** The native command buffer a stateful call posts from (DiSNI keeps it private; read once per call). */
    private static ByteBuffer commandBuffer(Object call) throws FabricException {
        try {
            Field f = call.getClass().getDeclaredField("cmd");
            f.setAccessible(true);
            return ((MemBuf) f.get(call)).getBuffer();
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new FabricException("DiSNI's stateful verb call " + call.getClass().getName()
                + " is not DiSNI 2.1's (no command buffer): " + e, e);
        }
    }

    /**
     * Creates a queue pair on {@code rdma} with room for {@code sendWr}/{@code recvWr} requests of the engine plus
     * the setup message, and posts the setup receive ahead of anything else.
     */
    static VerbsQueuePair create(VerbsFabric fabric, VerbsCmId id, RdmaCmId rdma, int sendWr, int recvWr,
                                 int inline) throws IOException {
        int capSend = sendWr + 1;
        int capRecv = recvWr + 1;
        // Only what can be outstanding is reserved: the setup messages now, the engine's depths at bind.
        fabric.reserveCqe(2);
        IbvQP qp = null;
        VerbsMemoryRegion setup = null;
        int slot = -1;
        try {
            IbvQPInitAttr attr = VerbsFabric.qpAttributes(fabric, capSend, capRecv, inline);
            qp = rdma.createQP(fabric.pd(), attr);
            if (qp == null) {
                throw new FabricException("rdma_create_qp failed (send " + capSend + ", receive " + capRecv
                    + ", inline " + inline + ")");
            }
            setup = (VerbsMemoryRegion) fabric.allocate(2 * SetupDescriptor.LENGTH, MemoryRegion.LOCAL_WRITE);
            long slotAndGeneration = fabric.registerQueuePair();
            slot = (int) slotAndGeneration;
            VerbsQueuePair q = new VerbsQueuePair(fabric, id, qp, slot, (int) (slotAndGeneration >>> 32), capSend,
                capRecv, inline, setup);
            q.reservedCqe = 2;
            fabric.publishQueuePair(slot, q);
            q.postSetupReceive();
            return q;
        } catch (IOException | RuntimeException e) {
            if (slot >= 0) {
                fabric.unregisterQueuePair(slot, null);
            }
            if (setup != null) {
                setup.close();
            }
            if (qp != null) {
                try {
                    rdma.destroyQP();
                } catch (IOException | RuntimeException ignored) {
                    // the id is destroyed next by the caller
                }
            }
            fabric.releaseCqe(2);
            throw e;
        }
    }

    /** Gives the engine the queue pair: its queues and limits (which must fit what the device queue pair has). */
    void bind(Config config) throws FabricException {
        if (!(config.sendCq() instanceof VerbsCompletionQueue) || !(config.recvCq() instanceof VerbsCompletionQueue)
            || ((VerbsCompletionQueue) config.sendCq()).fabricOf() != fabric
            || ((VerbsCompletionQueue) config.recvCq()).fabricOf() != fabric) {
            throw new IllegalArgumentException("the completion queues must come from this disni fabric");
        }
        if (config.maxSendWr() < 1 || config.maxRecvWr() < 1 || config.maxInlineData() < 0) {
            throw new IllegalArgumentException("queue depths must be positive and inline data not negative: " + config);
        }
        if (config.maxSendWr() > capSend - 1 || config.maxRecvWr() > capRecv - 1) {
            throw new FabricException("the queue pair of an incoming connection holds " + (capSend - 1) + " sends and "
                + (capRecv - 1) + " receives, fewer than the " + config.maxSendWr() + "/" + config.maxRecvWr()
                + " asked for: raise -Drdmanio.disni.maxWr");
        }
        if (config.maxInlineData() > capInline) {
            throw new FabricException("inline data of " + config.maxInlineData() + " bytes asked for; the device takes "
                + capInline);
        }
        fabric.reserveCqe(config.maxSendWr() + config.maxRecvWr());
        synchronized (postLock) {
            reservedCqe += config.maxSendWr() + config.maxRecvWr();
        }
        sendCq = (VerbsCompletionQueue) config.sendCq();
        recvCq = (VerbsCompletionQueue) config.recvCq();
        maxSendWr = config.maxSendWr();
        maxRecvWr = config.maxRecvWr();
        maxInline = config.maxInlineData();
    }

    boolean isBound() {
        return sendCq != null;
    }

    boolean uses(VerbsCompletionQueue cq) {
        return sendCq == cq || recvCq == cq;
    }

    @Override
    public int qpNum() {
        return qpNum;
    }

    @Override
    public boolean isError() {
        return error;
    }

    /** The connection is established: sends may be posted from now on. */
    void markEstablished() {
        established = true;
    }

    /** Marks the queue pair failed (a disconnect or an error completion); posts throw from now on. */
    void markError(String cause) {
        if (!error) {
            errorCause = cause;
            error = true;
        }
    }

    private void ensurePostable() throws FabricException {
        if (destroyed) {
            throw new FabricException("post on a destroyed queue pair " + qpNum);
        }
        if (error) {
            throw new FabricException("post on queue pair " + qpNum + " in the error state (" + errorCause + ")");
        }
    }

    private void ensureSendable() throws FabricException {
        ensurePostable();
        if (!established) {
            throw new FabricException("post on queue pair " + qpNum + " refused: the queue pair is not connected");
        }
    }

    private static void ensureRange(MemoryRegion region, int offset, int length) {
        if (region == null) {
            throw new NullPointerException("region");
        }
        if (offset < 0 || length < 0) {
            throw new IllegalArgumentException("negative offset or length: " + offset + ", " + length);
        }
    }

    @Override
    public void postRecv(long wrId, MemoryRegion region, int offset, int length) throws IOException {
        ensureRange(region, offset, length);
        synchronized (postLock) {
            ensurePostable();
            int outstanding = recvPosted - recvCompleted - internalRecvs.get();
            if (outstanding >= maxRecvWr) {
                throw new FabricException("receive queue of queue pair " + qpNum + " is full: " + outstanding
                    + " receives posted, maxRecvWr " + maxRecvWr);
            }
            implPostRecv(wrId, false, region.address() + offset, length, region.lkey());
        }
    }

    private void implPostRecv(long wrId, boolean internal, long address, int length, int lkey) throws IOException {
        assert Thread.holdsLock(postLock);
        int seq = recvPosted;
        int i = seq & recvMask;
        recvWrIds[i] = wrId;
        recvInternal[i] = internal;
        recvCommand.putLong(RECV_WR_ID_OFFSET, RECV_BIT | (internal ? INTERNAL_BIT : 0) | tag | (seq & 0xffffffffL));
        recvCommand.putLong(RECV_SGE_OFFSET, address);
        recvCommand.putInt(RECV_SGE_OFFSET + 8, length);
        recvCommand.putInt(RECV_SGE_OFFSET + 12, lkey);
        if (internal) {
            internalRecvs.incrementAndGet();
        }
        try {
            recvCall.execute();
        } catch (IOException e) {
            if (internal) {
                internalRecvs.decrementAndGet();
            }
            throw new FabricException("ibv_post_recv on queue pair " + qpNum + " failed: " + e.getMessage(), e);
        }
        recvPosted = seq + 1;
    }

    @Override
    public void postSend(long wrId, MemoryRegion region, int offset, int length, int flags) throws IOException {
        ensureRange(region, offset, length);
        synchronized (postLock) {
            ensureSendable();
            int verbsFlags = sendFlags(flags, length);
            int seq = reserveSend(wrId);
            sendWr.setWr_id(tag | (seq & 0xffffffffL));
            sendWr.setSend_flags(verbsFlags);
            sendSge.setAddr(region.address() + offset);
            sendSge.setLength(length);
            sendSge.setLkey(region.lkey());
            executeSend(sendCall, seq, false);
        }
    }

    private int sendFlags(int flags, int length) throws FabricException {
        int verbsFlags = (flags & SIGNALED) != 0 ? IbvSendWR.IBV_SEND_SIGNALED : 0;
        if ((flags & INLINE) != 0) {
            if (length > maxInline) {
                throw new FabricException("inline payload of " + length + " bytes exceeds maxInlineData " + maxInline);
            }
            verbsFlags |= IbvSendWR.IBV_SEND_INLINE;
        }
        return verbsFlags;
    }

    private int reserveSend(long wrId) throws FabricException {
        int outstanding = sendPosted - sendCompleted - internalSends.get();
        if (outstanding >= maxSendWr) {
            throw new FabricException("send queue of queue pair " + qpNum + " is full: " + outstanding
                + " requests outstanding, maxSendWr " + maxSendWr + " (a slot frees when a later signaled "
                + "completion is polled)");
        }
        int seq = sendPosted;
        sendWrIds[seq & sendMask] = wrId;
        sendOps[seq & sendMask] = (byte) Completions.OP_SEND;
        return seq;
    }

    private void executeSend(SVCPostSend call, int seq, boolean internal) throws IOException {
        if (internal) {
            internalSends.incrementAndGet();
        }
        try {
            call.execute();
        } catch (IOException e) {
            if (internal) {
                internalSends.decrementAndGet();
            }
            throw new FabricException("ibv_post_send on queue pair " + qpNum + " failed: " + e.getMessage(), e);
        }
        sendPosted = seq + 1;
    }

    /** Posts the receive of the peer's setup message. */
    void postSetupReceive() throws IOException {
        synchronized (postLock) {
            implPostRecv(0, true, setup.address(), SetupDescriptor.LENGTH, setup.lkey());
        }
    }

    /** Sends a setup message (signaled), ahead of any send the engine posts after this returns. */
    void postSetupSend(byte kind, ByteBuffer data) throws IOException {
        synchronized (postLock) {
            if (destroyed || error) {
                throw new FabricException("the connection failed during setup (" + errorCause + ")");
            }
            SetupDescriptor.write(setupBuffer, SetupDescriptor.LENGTH, kind, data);
            int seq = sendPosted;
            sendWrIds[seq & sendMask] = 0;
            sendOps[seq & sendMask] = OP_INTERNAL;
            sendWr.setWr_id(INTERNAL_BIT | tag | (seq & 0xffffffffL));
            sendWr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
            sendSge.setAddr(setup.address() + SetupDescriptor.LENGTH);
            sendSge.setLength(SetupDescriptor.LENGTH);
            sendSge.setLkey(setup.lkey());
            executeSend(sendCall, seq, true);
        }
    }

    /** One device completion of this queue pair (drain, under the fabric's completion lock). */
    void complete(long wrId, IbvWC wc) {
        int status = wc.getStatus();
        int seq = (int) wrId;
        if (status != Completions.SUCCESS) {
            markError(Completions.statusName(status));
            if (status != Completions.WR_FLUSH_ERR && !failing) {
                failing = true;
                if (status == Completions.RNR_RETRY_EXC_ERR) {
                    fabric.receiverNotReady();
                }
                id.failAsync("queue pair " + qpNum + " failed: " + Completions.statusName(status));
            }
        }
        if (wrId < 0) {
            int i = seq & recvMask;
            recvCompleted = seq + 1;
            if (recvInternal[i]) {
                internalRecvs.decrementAndGet();
                id.onSetupMessage(status, setupBuffer, wc.getByte_len());
                return;
            }
            VerbsCompletionQueue cq = recvCq;
            if (cq != null) {
                report(cq, recvWrIds[i], status, status == Completions.SUCCESS ? wc.getOpcode() : Completions.OP_RECV,
                    wc.getByte_len());
            }
        } else {
            int i = seq & sendMask;
            sendCompleted = seq + 1;
            byte op = sendOps[i];
            if (op == OP_INTERNAL) {
                internalSends.decrementAndGet();
                id.onSetupSent(status);
                return;
            }
            VerbsCompletionQueue cq = sendCq;
            if (cq != null) {
                report(cq, sendWrIds[i], status, status == Completions.SUCCESS ? wc.getOpcode() : op,
                    status == Completions.SUCCESS ? wc.getByte_len() : 0);
            }
        }
    }

    private void report(VerbsCompletionQueue cq, long engineId, int status, int opcode, int byteLen) {
        if (!cq.add(engineId, status, opcode, byteLen, qpNum)) {
            fabric.overrun(cq);
        }
    }

    /** Destroys the device queue pair (the id's close, after its disconnect). */
    void destroy(RdmaCmId rdma) {
        synchronized (postLock) {
            if (destroyed) {
                return;
            }
            destroyed = true;
            markError("destroyed");
        }
        fabric.unregisterQueuePair(slot, this);
        try {
            rdma.destroyQP();
        } catch (IOException | RuntimeException e) {
            LOG.debug("destroying queue pair {} failed", qpNum, e);
        }
        sendCall.free();
        recvCall.free();
        setup.close();
        int n;
        synchronized (postLock) {
            n = reservedCqe;
            reservedCqe = 0;
        }
        fabric.releaseCqe(n);
    }

    @Override
    public String toString() {
        return "disni queue pair " + qpNum + (error ? " (error: " + errorCause + ")" : "");
    }

    /** The access a region needs, in verbs terms. */
    static int verbsAccess(int access) {
        int a = 0;
        if ((access & MemoryRegion.LOCAL_WRITE) != 0) {
            a |= IbvMr.IBV_ACCESS_LOCAL_WRITE;
        }
        if ((access & MemoryRegion.REMOTE_WRITE) != 0) {
            a |= IbvMr.IBV_ACCESS_REMOTE_WRITE;
        }
        if ((access & MemoryRegion.REMOTE_READ) != 0) {
            a |= IbvMr.IBV_ACCESS_REMOTE_READ;
        }
        return a;
    }
}
