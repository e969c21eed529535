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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
     * Connect requests held at most while the accept queue is full. Linux's TCP never refuses a connect for a full
     * backlog: it drops the SYN and the client retries it, so the connect waits (within its timeout) until an
     * accept makes room, and applications size the backlog for that. Held requests are answered in order as
     * {@link #accept} takes connections; beyond this many a connect is refused with a reason naming the limit.
     */
    static final int MAX_HELD = 1024;
    /** Linux's bound on a listen backlog ({@code net.core.somaxconn}'s default). */
    static final int SOMAXCONN = 4096;
    /**
     * How long an answered request's handshake may take before its place in a full accept queue goes to a request
     * that waits. A handshake takes milliseconds; a client stopped in the middle of one (by a signal, a debugger,
     * or a local process that never finishes it) would otherwise hold its place for as long as it lives, where the
     * kernel keeps half-open TCP connections apart from the accept queue.
     */
    static final long HANDSHAKE_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final FabricEngine engine;
    private final CmId id;
    /** Connections completed or being completed before an accept: the backlog + 1, as Linux's accept queue. */
    private final int acceptLimit;
    private final ConnectionOptions options;
    private final InetSocketAddress local;
    /** Copied on write under {@link #listenersLock} (setup only), read without a lock and without allocating. */
    private volatile ReadinessListener[] readinessListeners = ReadinessListeners.NONE;
    private final Object listenersLock = new Object();

    // ---- guarded by lock
    private final Object lock = new Object();
    private final ArrayDeque<FabricConnection> ready = new ArrayDeque<>();
    /** Requests answered whose handshake may still be under way: counted against the accept queue until done. */
    private final ArrayList<FabricConnection> answered = new ArrayList<>();
    /** Requests held while the accept queue is full, oldest first. */
    private final ArrayDeque<CmEvent> held = new ArrayDeque<>();
    /** Answered requests whose handshake outlasted {@link #HANDSHAKE_NANOS} while others waited: to give up. */
    private final ArrayList<FabricConnection> stalled = new ArrayList<>();
    /** A look at the stalled handshakes is scheduled ({@link #noteStalledLocked}). */
    private boolean lookAgainScheduled;
    private boolean closed;

    FabricListener(FabricEngine engine, CmId id, int backlog, ConnectionOptions options) {
        this.engine = engine;
        this.id = id;
        this.acceptLimit = acceptLimit(backlog);
        this.options = options;
        this.local = id.localAddress();
    }

    /**
     * The accept queue's bound for a requested backlog, as Linux's: the backlog (at most {@link #SOMAXCONN}; below
     * 1, the JDK's default of 50) plus one.
     */
    static int acceptLimit(int requested) {
        return Math.min(requested < 1 ? 50 : requested, SOMAXCONN) + 1;
    }

    /** The pending-request bound the fabric's listening id is given: the accept queue and the held requests. */
    static int fabricBacklog(int requested) {
        return acceptLimit(requested) + MAX_HELD;
    }

    /**
     * A connect request (progress thread): held while the accept queue is full (or others are held before it),
     * else answered.
     */
    void onConnectRequest(CmEvent e) {
        synchronized (lock) {
            if (closed) {
                engine.reject(e.id(), HandshakeDescriptor.REASON_LISTENER_CLOSED);
                return;
            }
            if (!held.isEmpty() || !hasRoomLocked()) {
                if (held.size() >= MAX_HELD) {
                    engine.reject(e.id(), HandshakeDescriptor.REASON_NO_RESOURCES);
                    return;
                }
                held.add(e);
                noteStalledLocked();
                e = null;
            }
        }
        if (e != null) {
            answer(e, false);
        } else {
            abortStalled();
        }
    }

    /**
     * Requests wait for room: handshakes under way for longer than {@link #HANDSHAKE_NANOS} go to {@link #stalled};
     * if others may outlast it, a look again is scheduled for when the first of them would (a waiting request is
     * not sent again, as a SYN is, so nothing else would look).
     */
    private void noteStalledLocked() {
        long now = System.nanoTime();
        long next = Long.MAX_VALUE;
        for (FabricConnection c : answered) {
            if (!c.isHandshaking() || stalled.contains(c)) {
                continue;
            }
            long age = now - c.createdNanos();
            if (age > HANDSHAKE_NANOS) {
                stalled.add(c);
            } else {
                next = Math.min(next, HANDSHAKE_NANOS - age);
            }
        }
        if (next != Long.MAX_VALUE && !lookAgainScheduled && !held.isEmpty()) {
            lookAgainScheduled = true;
            // The JDK's shared delayer thread, made at its first use: nothing of rdmanio's runs until then.
            CompletableFuture.delayedExecutor(next / 1_000_000 + 1, TimeUnit.MILLISECONDS).execute(() -> {
                synchronized (lock) {
                    lookAgainScheduled = false;
                }
                answerHeld();
            });
        }
    }

    /**
     * Gives up the handshakes found stalled while requests wait for room (called without the lock), then answers
     * the requests held for their places.
     */
    private void abortStalled() {
        List<FabricConnection> give;
        synchronized (lock) {
            if (stalled.isEmpty()) {
                return;
            }
            give = new ArrayList<>(stalled);
            stalled.clear();
        }
        for (FabricConnection c : give) {
            LOG.warn("gave up the handshake of a connection from {} on {}: not completed in {} s while connect"
                + " requests waited for its place in the accept queue", c.remoteAddress(), local,
                TimeUnit.NANOSECONDS.toSeconds(HANDSHAKE_NANOS));
            c.abort();
        }
        answerHeld();
    }

    /**
     * Whether the accept queue has room for one more connection: those waiting for an accept and those whose
     * handshake is under way (ended ones are dropped from the count here, lazily).
     */
    private boolean hasRoomLocked() {
        if (ready.size() + answered.size() < acceptLimit) {
            return true;
        }
        answered.removeIf(c -> !c.isHandshaking());
        return ready.size() + answered.size() < acceptLimit;
    }

    /** Answers held requests, oldest first, while the accept queue has room (called without the lock). */
    private void answerHeld() {
        while (true) {
            CmEvent e;
            synchronized (lock) {
                if (closed || held.isEmpty()) {
                    return;
                }
                if (!hasRoomLocked()) {
                    noteStalledLocked();
                    break;
                }
                e = held.poll();
            }
            answer(e, true);
        }
        abortStalled();
    }

    /**
     * Checks the client's handshake, then accepts or rejects. A held request whose client gave up meanwhile (its
     * connect timed out, or it closed) fails to accept, quietly.
     */
    private void answer(CmEvent e, boolean wasHeld) {
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
        FabricConnection c;
        try {
            c = FabricConnection.accept(engine, this, e, options, HandshakeDescriptor.dataSlots(pd, at),
                HandshakeDescriptor.controlSlots(pd, at));
        } catch (IOException | RuntimeException ex) {
            // FabricConnection.accept has rejected the request, naming the limit when one was reached.
            if (wasHeld) {
                LOG.debug("a held connection request from {} on {} could not be accepted: {}", from, local,
                    ex.toString());
            } else {
                LOG.warn("refused a connection from {} on {}: {}", from, local, ex.toString(), ex);
            }
            return;
        }
        boolean abort = false;
        synchronized (lock) {
            if (closed) {
                abort = true;
            } else if (c.isHandshaking()) {
                answered.add(c);
            }
        }
        if (abort) {
            c.abort();
        }
    }

    /** Events of the listening id itself: nothing to do but note them. */
    void onEvent(CmEvent e) {
        LOG.debug("listener {} got {}", local, e.type());
    }

    /** An accepted connection whose handshake failed (called without its lock held): its room goes to one held. */
    void handshakeFailed(FabricConnection c) {
        synchronized (lock) {
            answered.remove(c);
        }
        answerHeld();
    }

    /** A connection whose handshake completed (called without its lock held). */
    void enqueue(FabricConnection c) {
        synchronized (lock) {
            answered.remove(c);
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
        FabricConnection c = acceptOnce();
        if (c == null) {
            engine.progressIfNotInside();
            c = acceptOnce();
        }
        if (c != null) {
            c.acceptedByApplication();
        }
        // Room in the accept queue (or handshakes that ended without a word): a connect held for it goes on, as a
        // client's retried SYN finds room.
        answerHeld();
        return c;
    }

    private FabricConnection acceptOnce() throws IOException {
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
        List<CmEvent> requests;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            pending = new ArrayList<>(ready);
            ready.clear();
            answered.clear();
            stalled.clear();
            requests = new ArrayList<>(held);
            held.clear();
        }
        // As a closed TCP port answers a retried SYN: refused.
        for (CmEvent e : requests) {
            engine.reject(e.id(), HandshakeDescriptor.REASON_LISTENER_CLOSED);
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
