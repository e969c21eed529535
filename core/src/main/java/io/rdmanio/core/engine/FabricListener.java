package io.rdmanio.core.engine;

import io.rdmanio.core.Logs;
import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.protocol.FrameDescriptor;
import io.rdmanio.core.protocol.HandshakeDescriptor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;

/**
 * A listening id of a {@link FabricEngine}. Connect requests are checked and accepted on the progress thread;
 * a connection whose handshake completed waits in {@link #ready} until {@link #accept()} takes it.
 *
 * <p>Thread-safety: the fields below the banner are guarded by {@link #lock}, a leaf lock except that
 * {@link #close()} closes the connections it drained after releasing it.
 */
final class FabricListener implements Listener, FabricEngine.Waitable {

    private static final Logger LOG = Logs.get(FabricListener.class);

    /**
     * Established connections waiting to be accepted, at least. Linux's TCP never refuses a connect for a full
     * backlog (the client retries its SYN), and applications size the backlog for that: a burst of connects
     * against the common default of 50 must not fail here. Beyond this many waiting connections a connect is
     * refused with a reason naming the limit.
     */
    static final int MIN_BACKLOG = 1024;

    private final FabricEngine engine;
    private final CmId id;
    private final int backlog;
    private final ConnectionOptions options;
    private final InetSocketAddress local;
    /** Copied on write under {@link #listenersLock} (setup only), read without a lock and without allocating. */
    private volatile ReadinessListener[] readinessListeners = ReadinessListeners.NONE;
    private final Object listenersLock = new Object();

    // ---- guarded by lock
    private final Object lock = new Object();
    private final ArrayDeque<FabricConnection> ready = new ArrayDeque<>();
    private boolean closed;

    FabricListener(FabricEngine engine, CmId id, int backlog, ConnectionOptions options) {
        this.engine = engine;
        this.id = id;
        this.backlog = effectiveBacklog(backlog);
        this.options = options;
        this.local = id.localAddress();
    }

    /** The accept queue's bound for a requested backlog: {@link #MIN_BACKLOG} at least. */
    static int effectiveBacklog(int requested) {
        return Math.max(requested, MIN_BACKLOG);
    }

    /** A connect request (progress thread): check the client's handshake, then accept or reject. */
    void onConnectRequest(CmEvent e) {
        synchronized (lock) {
            if (closed) {
                engine.reject(e.id(), HandshakeDescriptor.REASON_LISTENER_CLOSED);
                return;
            }
            if (ready.size() >= backlog) {
                engine.reject(e.id(), HandshakeDescriptor.REASON_NO_RESOURCES);
                return;
            }
        }
        ByteBuffer pd = e.privateData() == null ? ByteBuffer.allocate(0)
            : e.privateData().duplicate().order(FrameDescriptor.BYTE_ORDER);
        int at = pd.position();
        int reason = HandshakeDescriptor.check(pd, at, pd.remaining(), engine.config.slotSize());
        if (reason != HandshakeDescriptor.REASON_NONE) {
            LOG.debug("rejecting a connection from {} to {}: {}", e.id().remoteAddress(), local,
                HandshakeDescriptor.describe(reason, pd, at, pd.remaining(), engine.config.slotSize()));
            engine.reject(e.id(), reason);
            return;
        }
        InetSocketAddress from = e.id().remoteAddress();
        try {
            FabricConnection.accept(engine, this, e, options, HandshakeDescriptor.dataSlots(pd, at),
                HandshakeDescriptor.controlSlots(pd, at));
        } catch (IOException | RuntimeException ex) {
            // FabricConnection.accept has rejected the request, naming the limit when one was reached.
            LOG.warn("refused a connection from {} on {}: {}", from, local, ex.toString(), ex);
        }
    }

    /** Events of the listening id itself: nothing to do but note them. */
    void onEvent(CmEvent e) {
        LOG.debug("listener {} got {}", local, e.type());
    }

    /** A connection whose handshake completed (called without its lock held). */
    void enqueue(FabricConnection c) {
        synchronized (lock) {
            if (!closed) {
                ready.add(c);
                c = null;
            }
        }
        if (c != null) {
            c.abort();
            return;
        }
        engine.wakeWaiters();
        for (ReadinessListener l : readinessListeners) {
            l.readinessChanged(this);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>With nothing waiting, drives the engine's progress once and looks again: connect requests and the events
     * that complete a handshake reach the listener through progress, which a program polling a non-blocking
     * server channel without a selector would otherwise never run. The progress waits briefly for a thread that
     * holds the lock (the closer may be polling the very event that completes a handshake), and the queue is
     * looked at again whatever it found.
     */
    @Override
    public Connection accept() throws IOException {
        Connection c = acceptOnce();
        if (c == null) {
            engine.progressIfNotInside();
            c = acceptOnce();
        }
        return c;
    }

    private Connection acceptOnce() throws IOException {
        synchronized (lock) {
            if (closed) {
                throw new IOException("listener on " + local + " is closed");
            }
            return ready.poll();
        }
    }

    @Override
    public int readyOps() {
        synchronized (lock) {
            return ready.isEmpty() && !closed ? 0 : Readiness.ACCEPT;
        }
    }

    @Override
    public int await(int ops, long timeoutNanos) throws IOException {
        return engine.await(this, ops, timeoutNanos);
    }

    @Override
    public boolean isClosedLocally() {
        synchronized (lock) {
            return closed;
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
        return local;
    }

    @Override
    public Engine engine() {
        return engine;
    }

    @Override
    public void close() {
        List<FabricConnection> pending;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            pending = new ArrayList<>(ready);
            ready.clear();
        }
        engine.unregister(this, id);
        id.close();
        for (FabricConnection c : pending) {
            c.abort();
        }
        engine.wakeWaiters();
        for (ReadinessListener l : readinessListeners) {
            l.readinessChanged(this);
        }
    }

    @Override
    public String toString() {
        return "listener(" + local + ")";
    }
}
