package io.rdmanio.core.fabric.loopback;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Objects;

/**
 * A loopback connection-manager id.
 *
 * <p>Thread-safe: every state change happens under {@link LoopbackNamespace#LOCK}, which is taken before any
 * queue-pair lock. Ids created for incoming requests deliver their events on the listener's channel, as
 * rdma_cm does.
 */
final class LoopbackCmId implements CmId {

    static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();

    private static final int IDLE = 0;
    private static final int BOUND = 1;
    private static final int LISTENING = 2;
    /** Active side: the request is waiting for the listener's accept or reject. */
    private static final int CONNECTING = 3;
    /** Passive side: created by a request, waiting for accept or reject. */
    private static final int REQUESTED = 4;
    private static final int CONNECTED = 5;
    /** Refused, rejected, or abandoned by the other side before the connection was established. */
    private static final int REFUSED = 6;
    private static final int CLOSED = 7;

    private static final int DEFAULT_BACKLOG = 50;
    private static final InetAddress LOCALHOST;

    static {
        try {
            LOCALHOST = InetAddress.getByAddress("localhost", new byte[] {127, 0, 0, 1});
        } catch (java.net.UnknownHostException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final LoopbackFabric fabric;
    final LoopbackEventChannel channel;

    // ---- guarded by LoopbackNamespace.LOCK
    private int state = IDLE;
    /** The address reserved in the namespace, or null. */
    private InetSocketAddress bound;
    private volatile InetSocketAddress local;
    private volatile InetSocketAddress remote;
    private int backlog;
    /** Listener: requests neither accepted nor rejected yet. */
    private final ArrayList<LoopbackCmId> pending = new ArrayList<>();
    /** Passive side: the listener that created it. */
    private LoopbackCmId listener;
    /** The other side's id, from the request on. */
    private LoopbackCmId other;
    private volatile LoopbackQueuePair qp;
    /** Why the id is {@link #REFUSED}. */
    private String refusal = "refused";

    LoopbackCmId(LoopbackFabric fabric, LoopbackEventChannel channel) {
        this.fabric = fabric;
        this.channel = channel;
    }

    InetSocketAddress boundAddress() {
        return bound;
    }

    boolean isListening() {
        return state == LISTENING;
    }

    @Override
    public void bind(InetSocketAddress address) throws IOException {
        Objects.requireNonNull(address, "address");
        if (address.isUnresolved()) {
            throw new FabricException("cannot bind to unresolved address " + address);
        }
        synchronized (LoopbackNamespace.LOCK) {
            ensureState(IDLE, "bind");
            bound = LoopbackNamespace.bind(this, address);
            local = bound;
            state = BOUND;
        }
    }

    @Override
    public void listen(int backlog) throws IOException {
        synchronized (LoopbackNamespace.LOCK) {
            if (state == IDLE) {
                throw new FabricException("listen needs a bound id: bind first");
            }
            ensureState(BOUND, "listen");
            this.backlog = backlog < 1 ? DEFAULT_BACKLOG : backlog;
            state = LISTENING;
        }
    }

    @Override
    public void connectFrom(InetSocketAddress source) throws IOException {
        Objects.requireNonNull(source, "source");
        synchronized (LoopbackNamespace.LOCK) {
            ensureState(IDLE, "connectFrom");
            // Taken in the fabric's namespace now, as rdma_bind_addr takes it: connect finds the id bound.
            bound = LoopbackNamespace.bind(this, source.getAddress().isAnyLocalAddress()
                ? new InetSocketAddress(LOCALHOST, source.getPort()) : source);
            local = bound;
        }
    }

    @Override
    public void connect(InetSocketAddress address, ByteBuffer privateData) throws IOException {
        Objects.requireNonNull(address, "address");
        ByteBuffer data = copyPrivateData(privateData);
        Effects fx = Effects.begin();
        try {
            synchronized (LoopbackNamespace.LOCK) {
                if (state != IDLE && state != BOUND) {
                    throw new FabricException("connect refused: the id is " + stateName());
                }
                LoopbackQueuePair q = qp;
                if (q == null || q.state() != LoopbackQueuePair.STATE_INIT) {
                    throw new FabricException("connect needs a fresh queue pair: call createQueuePair first");
                }
                remote = address;
                if (address.isUnresolved()) {
                    state = REFUSED;
                    refusal = "unreachable";
                    channel.post(fx, new CmEvent(CmEvent.Type.UNREACHABLE, this, null, EMPTY,
                        "cannot resolve " + address.getHostString() + " on the loopback fabric"));
                    return;
                }
                if (bound == null) {
                    bound = LoopbackNamespace.bind(this,
                        new InetSocketAddress(Fabrics.localSourceFor(address.getAddress()), 0));
                    local = bound;
                }
                LoopbackCmId server = LoopbackNamespace.listenerFor(address);
                if (server == null) {
                    refuse(fx, "connection refused: no listener at " + address + " on the loopback fabric");
                    return;
                }
                if (server.pending.size() >= server.backlog) {
                    refuse(fx, "connection refused: the backlog of " + server.backlog + " pending requests at "
                        + address + " is full");
                    return;
                }
                LoopbackCmId child = new LoopbackCmId(server.fabric, server.channel);
                server.fabric.opened(child);
                child.state = REQUESTED;
                child.local = address;
                child.remote = local;
                child.listener = server;
                child.other = this;
                other = child;
                state = CONNECTING;
                server.pending.add(child);
                server.channel.post(fx, new CmEvent(CmEvent.Type.CONNECT_REQUEST, child, server, data, null));
            }
        } finally {
            fx.end();
        }
    }

    /** Refuses this active id's connect (fabric-level: empty private data). */
    private void refuse(Effects fx, String reason) {
        state = REFUSED;
        refusal = reason;
        channel.post(fx, new CmEvent(CmEvent.Type.REJECTED, this, null, EMPTY, reason));
    }

    @Override
    public void accept(ByteBuffer privateData) throws IOException {
        ByteBuffer data = copyPrivateData(privateData);
        Effects fx = Effects.begin();
        try {
            synchronized (LoopbackNamespace.LOCK) {
                ensureState(REQUESTED, "accept");
                LoopbackQueuePair q = qp;
                if (q == null) {
                    throw new FabricException("accept needs a queue pair: call createQueuePair first");
                }
                if (q.state() != LoopbackQueuePair.STATE_INIT) {
                    throw new FabricException("accept needs a fresh queue pair; " + q + " is in the error state");
                }
                LoopbackCmId client = other;
                if (client.state != CONNECTING || client.qp.state() != LoopbackQueuePair.STATE_INIT) {
                    rejectRequest(fx, EMPTY, "connection refused: the client's queue pair failed before accept");
                    throw new FabricException("accept failed: the connecting peer " + remote + " went away");
                }
                LoopbackQueuePair.connect(client.qp, q);
                listener.pending.remove(this);
                state = CONNECTED;
                client.state = CONNECTED;
                channel.post(fx, new CmEvent(CmEvent.Type.ESTABLISHED, this, null, EMPTY, null));
                client.channel.post(fx, new CmEvent(CmEvent.Type.ESTABLISHED, client, null, data, null));
            }
        } finally {
            fx.end();
        }
    }

    @Override
    public void reject(ByteBuffer privateData) throws IOException {
        ByteBuffer data = copyPrivateData(privateData);
        Effects fx = Effects.begin();
        try {
            synchronized (LoopbackNamespace.LOCK) {
                ensureState(REQUESTED, "reject");
                rejectRequest(fx, data, "connection rejected by the listener at " + local);
            }
        } finally {
            fx.end();
        }
    }

    /** Passive side: refuses the request with {@code data}, telling the client if it still waits. */
    private void rejectRequest(Effects fx, ByteBuffer data, String reason) {
        LoopbackCmId client = other;
        if (client.state == CONNECTING) {
            client.state = REFUSED;
            client.refusal = reason;
            client.channel.post(fx, new CmEvent(CmEvent.Type.REJECTED, client, null, data, reason));
        }
        abandonRequest("a request that was refused");
    }

    private void abandonRequest(String why) {
        state = REFUSED;
        refusal = why;
        if (listener != null) {
            listener.pending.remove(this);
        }
    }

    @Override
    public QueuePair createQueuePair(QueuePair.Config config) throws IOException {
        Objects.requireNonNull(config, "config");
        synchronized (LoopbackNamespace.LOCK) {
            if (qp != null) {
                throw new FabricException("the id already has a queue pair");
            }
            if (state == LISTENING || state == CLOSED || state == CONNECTED || state == REFUSED) {
                throw new FabricException("cannot create a queue pair on an id that is " + stateName());
            }
            LoopbackQueuePair q = new LoopbackQueuePair(fabric, this, config);
            q.sendCq.attach(q);
            if (q.recvCq != q.sendCq) {
                q.recvCq.attach(q);
            }
            fabric.opened(q);
            qp = q;
            return q;
        }
    }

    @Override
    public QueuePair queuePair() {
        return qp;
    }

    @Override
    public void disconnect() throws IOException {
        Effects fx = Effects.begin();
        try {
            synchronized (LoopbackNamespace.LOCK) {
                implDisconnect(fx);
            }
        } finally {
            fx.end();
        }
    }

    private void implDisconnect(Effects fx) {
        if (state == CONNECTED) {
            qp.fail(fx, "disconnected");
        } else if (state == CONNECTING) {
            // The request stays on the listener's channel; accepting it later fails.
            other.abandonRequest("a request the connecting peer " + local + " went away from");
            state = REFUSED;
            refusal = "a connect that was abandoned";
        }
    }

    /** Delivers this side's DISCONNECTED event (called under queue-pair locks; the channel lock is a leaf). */
    void disconnected(Effects fx, CmEvent event) {
        channel.post(fx, event);
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
        Effects fx = Effects.begin();
        try {
            synchronized (LoopbackNamespace.LOCK) {
                if (state == CLOSED) {
                    return;
                }
                implDisconnect(fx);
                if (state == LISTENING) {
                    for (LoopbackCmId child : pending.toArray(new LoopbackCmId[0])) {
                        child.rejectRequest(fx, EMPTY, "connection refused: the listener at " + local
                            + " closed before accepting");
                    }
                    pending.clear();
                } else if (state == REQUESTED) {
                    rejectRequest(fx, EMPTY, "connection refused: the request was dropped by the listener at "
                        + local);
                }
                if (bound != null) {
                    LoopbackNamespace.unbind(this);
                }
                state = CLOSED;
                remote = null;
            }
            LoopbackQueuePair q = qp;
            if (q != null) {
                q.destroy();
            }
            fabric.closed(this);
        } finally {
            fx.end();
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
            case CONNECTING: return "connecting to " + remote;
            case REQUESTED: return "a connect request from " + remote;
            case CONNECTED: return "connected to " + remote;
            case REFUSED: return refusal;
            case CLOSED: return "closed";
            default: return "in state " + state;
        }
    }

    /** A read-only copy of {@code data} (position to limit), checked against {@link #MAX_PRIVATE_DATA}. */
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
        return "loopback id (" + stateName() + ")";
    }
}
