package io.rdmanio.core.fabric.disni.verbs;

import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import io.rdmanio.core.Logs;
import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Objects;
import org.slf4j.Logger;

/**
 * A connection-manager id over an rdma_cm id, with the in-band setup that carries private data (see
 * {@link io.rdmanio.core.fabric.disni.DisniFabric}).
 *
 * <p>Thread-safe: state changes happen under this object's monitor. Lock order: the fabric's completion lock, then
 * an id's monitor, then a queue pair's post lock, then an event channel's lock. Native calls made under the monitor
 * never block (rdma_cm's calls are asynchronous; their outcome arrives as an event).
 */
final class VerbsCmId implements CmId {

    private static final Logger LOG = Logs.get(VerbsCmId.class);
    static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();
    private static final int DEFAULT_BACKLOG = 50;

    private static final int IDLE = 0;
    private static final int BOUND = 1;
    private static final int LISTENING = 2;
    /** Active side: resolving the address and route. */
    private static final int RESOLVING = 3;
    /** Active side: rdma_connect sent. */
    private static final int CONNECTING = 4;
    /** Active side: connected at the rdma_cm level, the request sent, waiting for the verdict. */
    private static final int AWAITING_VERDICT = 5;
    /** Passive side: accepted at the rdma_cm level, waiting for the peer's request. */
    private static final int AWAITING_REQUEST = 6;
    /** Passive side: CONNECT_REQUEST delivered, waiting for accept or reject. */
    private static final int REQUESTED = 7;
    private static final int CONNECTED = 8;
    /** The connection is gone (DISCONNECTED delivered). */
    private static final int GONE = 9;
    /** Refused, rejected, unreachable or abandoned before it was established. */
    private static final int REFUSED = 10;
    private static final int CLOSED = 11;

    final VerbsFabric fabric;
    final VerbsEventChannel channel;
    final RdmaCmId rdma;
    /** Passive side: the listening id the request came to. */
    private final VerbsCmId listener;

    // ---- guarded by this
    private int state;
    private String refusal = "refused";
    private int backlog;
    private final ArrayList<VerbsCmId> pending = new ArrayList<>();
    private ByteBuffer requestData;
    private boolean setupActive;
    private boolean peerGone;
    /**
     * Active side: the connection manager's event (its name) that reported the connection gone while the verdict was
     * awaited; the setup receive's completion (the verdict, or its flush) decides what the application sees.
     */
    private String lostAwaitingVerdict;
    private VerbsQueuePair qp;
    private boolean qpBound;
    private volatile InetSocketAddress local;
    private volatile InetSocketAddress remote;

    VerbsCmId(VerbsFabric fabric, VerbsEventChannel channel, RdmaCmId rdma, VerbsCmId listener) {
        this.fabric = fabric;
        this.channel = channel;
        this.rdma = rdma;
        this.listener = listener;
    }

    @Override
    public void bind(InetSocketAddress address) throws IOException {
        Objects.requireNonNull(address, "address");
        if (address.isUnresolved()) {
            throw new FabricException("cannot bind to unresolved address " + address);
        }
        synchronized (this) {
            ensureState(IDLE, "bind");
            implBind(address);
        }
    }

    private void implBind(InetSocketAddress address) throws IOException {
        InetSocketAddress target = address.getAddress().isAnyLocalAddress()
            ? new InetSocketAddress(fabric.deviceAddress(), address.getPort()) : address;
        try {
            rdma.bindAddr(target);
        } catch (IOException e) {
            String m = String.valueOf(e.getMessage());
            if (m.contains("errno 98")) {
                BindException b = new BindException("Address already in use: " + target + " on the disni fabric");
                b.initCause(e);
                throw b;
            }
            if (m.contains("errno 99") || m.contains("errno 19")) {
                BindException b = new BindException("cannot bind to " + target + ": not an address of the RDMA "
                    + "device (the disni fabric uses " + fabric.deviceAddress().getHostAddress() + ")");
                b.initCause(e);
                throw b;
            }
            throw new FabricException("binding to " + target + " failed: " + m, e);
        }
        local = socketAddress(rdma.getSource(), target);
        state = BOUND;
    }

    private static InetSocketAddress socketAddress(SocketAddress a, InetSocketAddress fallback) {
        return a instanceof InetSocketAddress ? (InetSocketAddress) a : fallback;
    }

    @Override
    public void listen(int n) throws IOException {
        synchronized (this) {
            if (state == IDLE) {
                throw new FabricException("listen needs a bound id: bind first");
            }
            ensureState(BOUND, "listen");
            backlog = n < 1 ? DEFAULT_BACKLOG : n;
            try {
                rdma.listen(backlog);
            } catch (IOException e) {
                throw new FabricException("rdma_listen on " + local + " failed: " + e.getMessage(), e);
            }
            state = LISTENING;
        }
    }

    @Override
    public QueuePair createQueuePair(QueuePair.Config config) throws IOException {
        Objects.requireNonNull(config, "config");
        synchronized (this) {
            if (qpBound) {
                throw new FabricException("the id already has a queue pair");
            }
            if (state == REQUESTED) {
                qp.bind(config);
                qpBound = true;
                return qp;
            }
            if (state != IDLE && state != BOUND) {
                throw new FabricException("cannot create a queue pair on an id that is " + stateName());
            }
            if (config.maxInlineData() > fabric.maxInlineData()) {
                throw new FabricException("inline data of " + config.maxInlineData() + " bytes asked for; the device "
                    + "takes " + fabric.maxInlineData());
            }
            if (state == IDLE) {
                // A queue pair needs the device, which an rdma_cm id has once it is bound to the device's address.
                implBind(new InetSocketAddress(fabric.deviceAddress(), 0));
            }
            VerbsQueuePair q = VerbsQueuePair.create(fabric, this, rdma, config.maxSendWr(), config.maxRecvWr(),
                config.maxInlineData());
            try {
                q.bind(config);
            } catch (IOException | RuntimeException e) {
                q.destroy(rdma);
                throw e;
            }
            qp = q;
            qpBound = true;
            return q;
        }
    }

    @Override
    public synchronized QueuePair queuePair() {
        return qpBound ? qp : null;
    }

    @Override
    public void connectFrom(InetSocketAddress source) throws IOException {
        Objects.requireNonNull(source, "source");
        synchronized (this) {
            ensureState(IDLE, "connectFrom");
            // rdma_bind_addr on the active id, in the device's port space (apart from the kernel TCP port the caller
            // holds); the queue pair then finds the id bound, and the peer sees this port.
            implBind(source);
        }
    }

    @Override
    public void connect(InetSocketAddress address, ByteBuffer privateData) throws IOException {
        Objects.requireNonNull(address, "address");
        ByteBuffer data = copyPrivateData(privateData);
        synchronized (this) {
            if (state != IDLE && state != BOUND) {
                throw new FabricException("connect refused: the id is " + stateName());
            }
            if (!qpBound || qp.isError()) {
                throw new FabricException("connect needs a fresh queue pair: call createQueuePair first");
            }
            remote = address;
            requestData = data;
            state = RESOLVING;
            beginSetup();
            if (address.isUnresolved()) {
                unreachable("cannot resolve " + address.getHostString());
                return;
            }
            try {
                rdma.resolveAddr(null, address, fabric.timeoutMillis());
            } catch (IOException e) {
                unreachable("no route to " + address + " on the RDMA device: " + e.getMessage());
            }
        }
    }

    @Override
    public void accept(ByteBuffer privateData) throws IOException {
        ByteBuffer data = copyPrivateData(privateData);
        synchronized (this) {
            ensureState(REQUESTED, "accept");
            if (!qpBound) {
                throw new FabricException("accept needs a queue pair: call createQueuePair first");
            }
            if (peerGone || qp.isError()) {
                throw new FabricException("accept failed: the connecting peer " + remote + " went away");
            }
            qp.postSetupSend(SetupDescriptor.ACCEPT, data);
            state = CONNECTED;
            qp.markEstablished();
            leavePending();
            endSetup();
            channel.post(new CmEvent(CmEvent.Type.ESTABLISHED, this, null, EMPTY, null));
        }
    }

    @Override
    public void reject(ByteBuffer privateData) throws IOException {
        ByteBuffer data = copyPrivateData(privateData);
        synchronized (this) {
            ensureState(REQUESTED, "reject");
            state = REFUSED;
            refusal = "a request that was refused";
            leavePending();
            if (peerGone) {
                endSetup();
                return;
            }
            try {
                qp.postSetupSend(SetupDescriptor.REJECT, data);
                // The setup stays active until the verdict's completion: then the fabric disconnects.
            } catch (IOException e) {
                LOG.debug("sending a rejection to {} failed", remote, e);
                disconnectQuietly();
                endSetup();
            }
        }
    }

    @Override
    public void disconnect() {
        synchronized (this) {
            switch (state) {
                case CONNECTED:
                    disconnectQuietly();
                    break;
                case RESOLVING:
                case CONNECTING:
                case AWAITING_VERDICT:
                    state = REFUSED;
                    refusal = "a connect that was abandoned";
                    disconnectQuietly();
                    endSetup();
                    break;
                default:
                    break;
            }
        }
    }

    private void disconnectQuietly() {
        if (qp != null) {
            qp.markError("disconnected");
        }
        try {
            rdma.disconnect();
        } catch (IOException | RuntimeException e) {
            LOG.debug("rdma_disconnect of {} failed", this, e);
        }
    }

    /** An error completion: the connection ends (both sides get DISCONNECTED). Called under the completion lock. */
    void failAsync(String cause) {
        synchronized (this) {
            if (state == CLOSED) {
                return;
            }
            LOG.debug("{}: {}", this, cause);
            disconnectQuietly();
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    @Override
    public void close() {
        VerbsCmId[] children;
        synchronized (this) {
            if (state == CLOSED) {
                return;
            }
            children = pending.toArray(new VerbsCmId[0]);
            pending.clear();
            if (state == CONNECTED || state == AWAITING_REQUEST || state == REQUESTED || state == RESOLVING
                || state == CONNECTING || state == AWAITING_VERDICT) {
                disconnectQuietly();
            }
            leavePending();
            endSetup();
            state = CLOSED;
            remote = null;
        }
        // A request never accepted is refused by destroying its id; an accepted one sees DISCONNECTED.
        for (VerbsCmId child : children) {
            child.close();
        }
        fabric.forget(this);
        VerbsQueuePair q = qp;
        if (q != null) {
            q.destroy(rdma);
        }
        // Dropped before the native id is freed: a new id may reuse its address as DiSNI's key.
        fabric.dropFromDisni(rdma);
        try {
            rdma.destroyId();
        } catch (IOException | RuntimeException e) {
            LOG.debug("rdma_destroy_id of {} failed", this, e);
        }
        fabric.closed(this);
    }

    // -------------------------------------------------------------------------------------------------------------
    // Events (the connection-manager thread) and setup messages (the thread that drains completions).

    /** A new connection to this listening id, accepted at the rdma_cm level into a queue pair of the fabric's size. */
    void onConnectRequest(RdmaCmId child) {
        VerbsCmId c = new VerbsCmId(fabric, channel, child, this);
        fabric.remember(child, c);
        boolean take;
        synchronized (this) {
            take = state == LISTENING && pending.size() < backlog;
            if (take) {
                pending.add(c);
            }
        }
        if (!take) {
            LOG.debug("refusing a connection to {}: not listening or the backlog is full", local);
            c.close();
            return;
        }
        synchronized (c) {
            c.state = AWAITING_REQUEST;
            try {
                c.local = socketAddress(child.getSource(), local);
                c.remote = socketAddress(child.getDestination(), null);
                c.qp = VerbsQueuePair.create(fabric, c, child, fabric.maxWr(), fabric.maxWr(),
                    fabric.acceptInline());
                c.beginSetup();
                child.accept(fabric.connParam());
                return;
            } catch (IOException | RuntimeException e) {
                LOG.warn("refusing a connection from {} to {}: {}", c.remote, local, e.toString());
            }
        }
        c.close();
    }

    void onEvent(int type) {
        boolean close = false;
        synchronized (this) {
            if (state == CLOSED) {
                return;
            }
            if (type == RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_RESOLVED.ordinal()) {
                if (state == RESOLVING) {
                    try {
                        rdma.resolveRoute(fabric.timeoutMillis());
                    } catch (IOException e) {
                        unreachable("no route to " + remote + ": " + e.getMessage());
                    }
                }
            } else if (type == RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_RESOLVED.ordinal()) {
                if (state == RESOLVING) {
                    try {
                        rdma.connect(fabric.connParam());
                        state = CONNECTING;
                    } catch (IOException e) {
                        unreachable("rdma_connect to " + remote + " failed: " + e.getMessage());
                    }
                }
            } else if (type == RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_ERROR.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_ERROR.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_UNREACHABLE.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_ERROR.ordinal()) {
                String what = RdmaCmEvent.EventType.values()[type].name();
                if (state == RESOLVING || state == CONNECTING || state == AWAITING_VERDICT) {
                    unreachable(remote + " cannot be reached over RDMA (" + what + ")");
                } else {
                    close = lost(what);
                }
            } else if (type == RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED.ordinal()) {
                if (state == RESOLVING || state == CONNECTING || state == AWAITING_VERDICT) {
                    refuse("connection refused: no listener at " + remote + " on the disni fabric");
                }
            } else if (type == RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED.ordinal()) {
                if (state == CONNECTING) {
                    state = AWAITING_VERDICT;
                    local = socketAddress(getSourceQuietly(), local);
                    try {
                        qp.postSetupSend(SetupDescriptor.REQUEST, requestData);
                    } catch (IOException e) {
                        refuse("connection refused: sending the request to " + remote + " failed: " + e.getMessage());
                        disconnectQuietly();
                    }
                }
            } else if (type == RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_DEVICE_REMOVAL.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_CHANGE.ordinal()) {
                close = lost(RdmaCmEvent.EventType.values()[type].name());
            }
        }
        if (close) {
            close();
        }
    }

    /** The connection went away (under the monitor); returns whether the id should be destroyed now. */
    private boolean lost(String what) {
        // rdma_disconnect moves the queue pair to the error state, which flushes every outstanding request.
        disconnectQuietly();
        switch (state) {
            case CONNECTED:
                state = GONE;
                channel.post(new CmEvent(CmEvent.Type.DISCONNECTED, this, null, EMPTY,
                    "the connection to " + remote + " ended (" + what + ")"));
                return false;
            case AWAITING_VERDICT:
                // The verdict may be on its way: a listener disconnects as soon as its rejection is sent, and the
                // connection manager's event can overtake the completion of the rejection's receive here (its
                // private data was lost about once in 30 rejections on soft-RoCE). That receive completes either way,
                // with the verdict or flushed by the disconnect: onSetupMessage decides then.
                lostAwaitingVerdict = what;
                return false;
            case RESOLVING:
            case CONNECTING:
                refuse("connection refused: " + remote + " closed the connection during setup");
                return false;
            case AWAITING_REQUEST:
                // Nobody has seen this connection yet.
                return true;
            case REQUESTED:
                peerGone = true;
                return false;
            case REFUSED:
                endSetup();
                return false;
            default:
                return false;
        }
    }

    /** The peer's setup message arrived in the setup receive (under the completion lock). */
    void onSetupMessage(int status, ByteBuffer buffer, int length) {
        CmEvent event = null;
        CmEvent then = null;
        VerbsEventChannel target = null;
        synchronized (this) {
            if (status != Completions.SUCCESS) {
                // The queue pair failed; the connection manager reports it, or reported it while the verdict was
                // awaited, and this flush says no verdict came.
                if (state == AWAITING_VERDICT && lostAwaitingVerdict != null) {
                    refuse("connection refused: " + remote + " closed the connection during setup");
                }
                return;
            }
            byte kind = SetupDescriptor.kind(buffer, 0, length);
            if (state == AWAITING_REQUEST && kind == SetupDescriptor.REQUEST) {
                state = REQUESTED;
                event = new CmEvent(CmEvent.Type.CONNECT_REQUEST, this, listener, SetupDescriptor.data(buffer, 0), null);
                target = listener.channel;
            } else if (state == AWAITING_VERDICT && kind == SetupDescriptor.ACCEPT) {
                state = CONNECTED;
                qp.markEstablished();
                endSetup();
                event = new CmEvent(CmEvent.Type.ESTABLISHED, this, null, SetupDescriptor.data(buffer, 0), null);
                target = channel;
                if (lostAwaitingVerdict != null) {
                    // Accepted, then gone before the acceptance was seen here: both, in that order.
                    state = GONE;
                    then = new CmEvent(CmEvent.Type.DISCONNECTED, this, null, EMPTY,
                        "the connection to " + remote + " ended (" + lostAwaitingVerdict + ")");
                }
            } else if (state == AWAITING_VERDICT && kind == SetupDescriptor.REJECT) {
                state = REFUSED;
                refusal = "rejected by the listener at " + remote;
                endSetup();
                disconnectQuietly();
                event = new CmEvent(CmEvent.Type.REJECTED, this, null, SetupDescriptor.data(buffer, 0),
                    "connection rejected by the listener at " + remote);
                target = channel;
            } else if (state == AWAITING_REQUEST || state == AWAITING_VERDICT) {
                LOG.warn("{}: the peer sent a malformed setup message ({} bytes); dropping the connection", this,
                    length);
                if (state == AWAITING_VERDICT) {
                    refuse("connection refused: " + remote + " answered with a malformed setup message");
                }
                disconnectQuietly();
            }
        }
        if (event != null) {
            target.post(event);
            if (then != null) {
                target.post(then);
            }
        }
    }

    /** A setup message of ours completed (under the completion lock). */
    void onSetupSent(int status) {
        synchronized (this) {
            if (state == REFUSED && listener != null) {
                // The rejection went out (or failed): the connection has nothing left to carry.
                disconnectQuietly();
                endSetup();
            }
        }
    }

    private SocketAddress getSourceQuietly() {
        try {
            return rdma.getSource();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private void unreachable(String reason) {
        state = REFUSED;
        refusal = "unreachable";
        endSetup();
        channel.post(new CmEvent(CmEvent.Type.UNREACHABLE, this, null, EMPTY, reason));
    }

    private void refuse(String reason) {
        state = REFUSED;
        refusal = reason;
        endSetup();
        channel.post(new CmEvent(CmEvent.Type.REJECTED, this, null, EMPTY, reason));
    }

    private void beginSetup() {
        if (!setupActive) {
            setupActive = true;
            fabric.setupBegan();
        }
    }

    private void endSetup() {
        if (setupActive) {
            setupActive = false;
            fabric.setupEnded();
        }
    }

    private void leavePending() {
        if (listener != null) {
            synchronized (listener) {
                listener.pending.remove(this);
            }
        }
    }

    private void ensureState(int expected, String operation) throws FabricException {
        if (state != expected) {
            throw new FabricException(operation + " refused: the id is " + stateName());
        }
    }

    private String stateName() {
        switch (state) {
            case IDLE: return "idle";
            case BOUND: return "bound to " + local;
            case LISTENING: return "listening on " + local;
            case RESOLVING: return "resolving " + remote;
            case CONNECTING: return "connecting to " + remote;
            case AWAITING_VERDICT: return "waiting for " + remote + " to accept";
            case AWAITING_REQUEST: return "waiting for the request of " + remote;
            case REQUESTED: return "a connect request from " + remote;
            case CONNECTED: return "connected to " + remote;
            case GONE: return "disconnected from " + remote;
            case REFUSED: return refusal;
            case CLOSED: return "closed";
            default: return "in state " + state;
        }
    }

    /** A copy of {@code data} (position to limit), checked against {@link #MAX_PRIVATE_DATA}. */
    static ByteBuffer copyPrivateData(ByteBuffer data) {
        if (data == null || !data.hasRemaining()) {
            return EMPTY;
        }
        if (data.remaining() > MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("private data of " + data.remaining() + " bytes exceeds the limit of "
                + MAX_PRIVATE_DATA + " bytes of a connection-manager message");
        }
        ByteBuffer copy = ByteBuffer.allocate(data.remaining());
        copy.put(data.duplicate()).flip();
        return copy.asReadOnlyBuffer();
    }

    @Override
    public String toString() {
        return "disni id (" + stateName() + ")";
    }
}
