package io.rdmanio.selector;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.EngineStats;
import io.rdmanio.core.engine.Listener;
import io.rdmanio.core.engine.Readiness;
import io.rdmanio.core.engine.ReadinessListener;
import io.rdmanio.core.fabric.Notifier;
import java.io.IOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A test double of the engine API: byte streams in memory with bounded buffers (so writes run out of room and
 * OP_WRITE matters); handshakes, bytes, FINs and returned credit are delivered only by {@link #progress()}, as
 * completions are by a real engine, so whoever waits must drive progress or be woken by the armed notifier. It checks the selector module against the engine
 * contract independently of any fabric. Thread-safe: one lock for all state; listeners run outside it.
 */
final class InMemoryEngine implements Engine {

    private static final int DEFAULT_BUFFER = 64 * 1024;

    private final Object lock = new Object();
    // -- lock
    private final Map<Integer, MemListener> listeners = new HashMap<>();
    private final ArrayDeque<MemConnection> handshakes = new ArrayDeque<>();
    /** Connections with bytes, a FIN or returned credit that only {@link #progress()} delivers. */
    private final ArrayDeque<MemConnection> deliveries = new ArrayDeque<>();
    /** Every armed notifier: several selectors (and blocked channels) may wait on one engine at once. */
    private final List<Notifier> armed = new ArrayList<>();
    private int nextPort = 41_000;
    /** A silent fabric: handshakes never finish (as when a peer's RDMA address does not answer). */
    private final boolean silent;

    InMemoryEngine() {
        this(false);
    }

    InMemoryEngine(boolean silent) {
        this.silent = silent;
    }
    private long opened;

    @Override
    public String fabricName() {
        return "memory";
    }

    @Override
    public Listener listen(InetSocketAddress local, int backlog, ConnectionOptions options) throws IOException {
        synchronized (lock) {
            int port = local.getPort() == 0 ? nextPort++ : local.getPort();
            if (listeners.containsKey(port)) {
                throw new BindException("Address already in use: " + local + " on the memory fabric");
            }
            MemListener l = new MemListener(new InetSocketAddress(local.getAddress(), port), options,
                Math.min(backlog < 1 ? 50 : backlog, 4096) + 1);
            listeners.put(port, l);
            return l;
        }
    }

    @Override
    public Connection connect(InetSocketAddress remote, ConnectionOptions options) {
        MemConnection c;
        Notifier n;
        synchronized (lock) {
            InetSocketAddress source = options == null ? null : options.source();
            InetSocketAddress local = source == null ? new InetSocketAddress(remote.getAddress(), nextPort++)
                : source.getAddress().isAnyLocalAddress() ? new InetSocketAddress(remote.getAddress(), source.getPort())
                : source;
            c = new MemConnection(local, remote, options);
            c.pending = true;
            if (!silent) {
                handshakes.add(c);
            }
            n = takeArmedLocked();
        }
        signal(n);
        return c;
    }

    @Override
    public int progress() {
        List<Runnable> fire = new ArrayList<>();
        int work = 0;
        synchronized (lock) {
            MemConnection c;
            while ((c = handshakes.poll()) != null) {
                work++;
                MemListener l = listeners.get(c.remote.getPort());
                if (l != null && !l.closed && (l.backlog.size() >= l.limit || (!l.held.isEmpty() && !c.wasHeld))) {
                    // As Linux's accept queue: held (the client's SYN retried) until an accept makes room.
                    c.wasHeld = true;
                    l.held.add(c);
                    continue;
                }
                c.pending = false;
                if (l == null || l.closed) {
                    c.failure = new ConnectException("Connection refused: no listener at " + c.remote + " on the memory fabric");
                } else {
                    MemConnection s = new MemConnection(l.local, c.local, l.options);
                    s.peer = c;
                    c.peer = s;
                    s.connected = true;
                    c.connected = true;
                    opened += 2;
                    l.backlog.add(s);
                    fire.add(l::fire);
                    if (c.closed && !c.outputShut) {
                        // Closed while connecting: as TCP on loopback, the handshake completed and a FIN follows.
                        c.outputShut = true;
                        c.finQueued = true;
                        scheduleLocked(c);
                    }
                }
                fire.add(c::fire);
            }
            MemConnection d;
            while ((d = deliveries.poll()) != null) {
                work++;
                d.scheduled = false;
                fire.addAll(d.deliverLocked());
            }
            lock.notifyAll();
        }
        fire.forEach(Runnable::run);
        return work;
    }

    /** Under the lock: {@code c} has something for progress to deliver; returns the notifier to signal. */
    private Notifier scheduleLocked(MemConnection c) {
        if (!c.scheduled) {
            c.scheduled = true;
            deliveries.add(c);
        }
        lock.notifyAll();
        return takeArmedLocked();
    }

    private Notifier takeArmedLocked() {
        if (armed.isEmpty()) {
            return null;
        }
        Notifier[] all = armed.toArray(new Notifier[0]);
        armed.clear();
        return () -> {
            for (Notifier n : all) {
                n.signal();
            }
        };
    }

    private static void signal(Notifier n) {
        if (n != null) {
            n.signal();
        }
    }

    @Override
    public boolean arm(Notifier notifier) {
        synchronized (lock) {
            if (!handshakes.isEmpty() || !deliveries.isEmpty()) {
                return false;
            }
            if (!armed.contains(notifier)) {
                armed.add(notifier);
            }
            return true;
        }
    }

    @Override
    public long spinNanos() {
        return TimeUnit.MICROSECONDS.toNanos(20);
    }

    @Override
    public EngineStats stats() {
        synchronized (lock) {
            return new EngineStats(opened, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        }
    }

    @Override
    public void close() {
    }

    /** The contract's await: drives progress, then waits for readiness, new work, close or the timeout. */
    private int awaitReady(java.util.function.IntSupplier ready, java.util.function.BooleanSupplier closed, long timeoutNanos) {
        long deadline = timeoutNanos == Long.MAX_VALUE ? 0 : System.nanoTime() + timeoutNanos;
        for (;;) {
            progress();
            synchronized (lock) {
                int r = ready.getAsInt();
                if (r != 0 || closed.getAsBoolean()) {
                    return r;
                }
                if (Thread.currentThread().isInterrupted()) {
                    return 0;
                }
                if (!handshakes.isEmpty() || !deliveries.isEmpty()) {
                    continue;
                }
                long wait = deadline == 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (deadline != 0 && wait <= 0) {
                    return 0;
                }
                try {
                    lock.wait(deadline == 0 ? 0 : Math.max(1, wait));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return 0;
                }
            }
        }
    }

    private final class MemListener implements Listener {
        final InetSocketAddress local;
        final ConnectionOptions options;
        final ArrayDeque<MemConnection> backlog = new ArrayDeque<>();
        /** Connects beyond the accept queue's bound (backlog + 1), oldest first. */
        final ArrayDeque<MemConnection> held = new ArrayDeque<>();
        final int limit;
        final List<ReadinessListener> rls = new CopyOnWriteArrayList<>();
        boolean closed;

        MemListener(InetSocketAddress local, ConnectionOptions options, int limit) {
            this.local = local;
            this.options = options;
            this.limit = limit;
        }

        void fire() {
            for (ReadinessListener r : rls) {
                r.readinessChanged(this);
            }
        }

        /** As the engine contract says: with nothing waiting, progress is driven once before giving up. */
        @Override
        public Connection accept() {
            Connection c = acceptOnce();
            if (c == null && progress() > 0) {
                c = acceptOnce();
            }
            return c;
        }

        private Connection acceptOnce() {
            Connection c;
            Notifier n = null;
            synchronized (lock) {
                c = backlog.poll();
                if (!held.isEmpty() && backlog.size() < limit) {
                    handshakes.add(held.poll());
                    n = takeArmedLocked();
                    lock.notifyAll();
                }
            }
            signal(n);
            return c;
        }

        @Override
        public int readyOps() {
            synchronized (lock) {
                return backlog.isEmpty() ? 0 : Readiness.ACCEPT;
            }
        }

        @Override
        public int await(int ops, long timeoutNanos) {
            return awaitReady(() -> readyOps() & ops, () -> closed, timeoutNanos);
        }

        @Override
        public void addReadinessListener(ReadinessListener l) {
            rls.add(l);
        }

        @Override
        public void removeReadinessListener(ReadinessListener l) {
            rls.remove(l);
        }

        @Override
        public InetSocketAddress localAddress() {
            return local;
        }

        @Override
        public Engine engine() {
            return InMemoryEngine.this;
        }

        @Override
        public void close() {
            List<MemConnection> refused;
            List<MemConnection> heldRefused;
            synchronized (lock) {
                closed = true;
                listeners.remove(local.getPort(), this);
                refused = new ArrayList<>(backlog);
                backlog.clear();
                for (MemConnection c : held) {
                    c.pending = false;
                    c.failure = new ConnectException("Connection refused: the listener at " + local + " closed");
                }
                heldRefused = new ArrayList<>(held);
                held.clear();
                lock.notifyAll();
            }
            refused.forEach(MemConnection::abort);
            heldRefused.forEach(MemConnection::fire);
        }
    }

    private final class MemConnection implements Connection {
        final InetSocketAddress local;
        final InetSocketAddress remote;
        final ByteBuffer inbox;
        final List<ReadinessListener> rls = new CopyOnWriteArrayList<>();
        MemConnection peer;
        /** Bytes written, not yet delivered to the peer's inbox by progress. */
        ByteBuffer outbox;
        boolean finQueued;
        boolean creditQueued;
        boolean scheduled;
        boolean pending;
        /** Held once by a full accept queue (re-queued by an accept: it goes before newer connects). */
        boolean wasHeld;
        boolean connected;
        IOException failure;
        boolean closed;
        boolean finReceived;
        boolean reset;
        /** The reset came after this side had the peer's FIN: Linux's CLOSE_WAIT reports it as EPIPE to writes. */
        boolean resetAfterFin;
        /** How the reset was first reported: 0 not yet, 'r' by a read, 'w' by a write. */
        char resetReport;
        boolean inputShut;
        boolean outputShut;
        boolean wroteAfterPeerClosed;

        MemConnection(InetSocketAddress local, InetSocketAddress remote, ConnectionOptions options) {
            this.local = local;
            this.remote = remote;
            this.inbox = ByteBuffer.allocate(options.receiveBufferSize() > 0 ? options.receiveBufferSize() : DEFAULT_BUFFER);
        }

        void fire() {
            for (ReadinessListener r : rls) {
                r.readinessChanged(this);
            }
        }

        /** Under the lock, from progress: moves written bytes and a FIN to the peer; returns whom to tell. */
        List<Runnable> deliverLocked() {
            List<Runnable> tell = new ArrayList<>(2);
            MemConnection p = peer;
            if (outbox != null && outbox.position() > 0 && p != null && !p.closed) {
                outbox.flip();
                p.inbox.put(outbox);
                outbox.clear();
                tell.add(p::fire);
            } else if (outbox != null) {
                outbox.clear();
            }
            if (finQueued && p != null) {
                finQueued = false;
                p.finReceived = true;
                tell.add(p::fire);
            }
            if (creditQueued && p != null) {
                creditQueued = false;
                tell.add(p::fire);
            }
            return tell;
        }

        /** Bytes this side may still write: the peer's free inbox less what is in flight. */
        int sendRoomLocked() {
            return peer.inbox.remaining() - (outbox == null ? 0 : outbox.position());
        }

        @Override
        public boolean finishConnect() throws IOException {
            return finishConnectOnce() || (progress() > 0 && finishConnectOnce());
        }

        private boolean finishConnectOnce() throws IOException {
            synchronized (lock) {
                if (failure != null) {
                    throw failure;
                }
                return connected;
            }
        }

        @Override
        public boolean isConnected() {
            synchronized (lock) {
                return connected;
            }
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            long n = readOnce(dsts, offset, length);
            if (n == 0 && progress() > 0) {
                n = readOnce(dsts, offset, length);
            }
            return n;
        }

        private long readOnce(ByteBuffer[] dsts, int offset, int length) throws IOException {
            MemConnection p;
            Notifier notifier = null;
            long n = 0;
            synchronized (lock) {
                if (inputShut) {
                    return -1;
                }
                // As TCP: bytes that arrived before the reset are read first.
                if (reset && inbox.position() == 0) {
                    // As Linux's ECONNRESET: reported once, to the first call that sees it (see resetReport).
                    if (resetReport == 'w' || resetAfterFin) {
                        return -1;
                    }
                    resetReport = 'r';
                    throw new java.net.SocketException("Connection reset");
                }
                inbox.flip();
                for (int i = offset; i < offset + length && inbox.hasRemaining(); i++) {
                    ByteBuffer d = dsts[i];
                    int k = Math.min(d.remaining(), inbox.remaining());
                    ByteBuffer slice = inbox.slice();
                    slice.limit(k);
                    d.put(slice);
                    inbox.position(inbox.position() + k);
                    n += k;
                }
                inbox.compact();
                if (n == 0 && finReceived) {
                    return -1;
                }
                p = peer;
                if (n > 0 && p != null) {
                    // The freed room reaches the writer as credit, through progress.
                    creditQueued = true;
                    notifier = scheduleLocked(this);
                }
            }
            signal(notifier);
            return n;
        }

        /** SO_OOBINLINE of this end: an urgent byte from the peer is delivered inline, else dropped. */
        volatile boolean oobInline;

        @Override
        public void setOobInline(boolean on) {
            oobInline = on;
        }

        @Override
        public int writeUrgent(ByteBuffer src) throws IOException {
            MemConnection p = peer;
            synchronized (lock) {
                if (p != null && !p.oobInline && !reset && !outputShut && !closed) {
                    // Dropped by a peer that does not inline urgent data, as TCP keeps it out of the stream.
                    src.position(src.position() + 1);
                    return 1;
                }
            }
            // Inline (or failing as a write fails).
            return (int) write(new ByteBuffer[] {src}, 0, 1);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            long n = writeOnce(srcs, offset, length);
            if (hasRemaining(srcs, offset, length) && progress() > 0) {
                n += writeOnce(srcs, offset, length);
            }
            return n;
        }

        private boolean hasRemaining(ByteBuffer[] srcs, int offset, int length) {
            for (int i = offset; i < offset + length; i++) {
                if (srcs[i].hasRemaining()) {
                    return true;
                }
            }
            return false;
        }

        private long writeOnce(ByteBuffer[] srcs, int offset, int length) throws IOException {
            MemConnection p;
            Notifier notifier = null;
            long n = 0;
            synchronized (lock) {
                if (reset) {
                    if (resetReport == 0 && !resetAfterFin) {
                        resetReport = 'w';
                        throw new IOException("Connection reset by peer");
                    }
                    throw new IOException("Broken pipe");
                }
                if (outputShut || closed) {
                    throw new IOException("output shut down");
                }
                p = peer;
                // A peer shut both ways refuses bytes as a closed one does (Linux resets in FIN_WAIT, input shut).
                boolean refuses = p.closed || (p.inputShut && p.outputShut);
                if (refuses && wroteAfterPeerClosed) {
                    // The reset the first such write provoked.
                    throw new IOException("Broken pipe");
                }
                if (refuses) {
                    // As TCP: bytes to a closed peer are dropped (the peer answers with a reset, which fails the
                    // next write). A peer that only shut its input still takes them, unread, within its window.
                    wroteAfterPeerClosed = true;
                    for (int i = offset; i < offset + length; i++) {
                        n += srcs[i].remaining();
                        srcs[i].position(srcs[i].limit());
                    }
                    return n;
                }
                if (outbox == null) {
                    outbox = ByteBuffer.allocate(p.inbox.capacity());
                }
                int room = sendRoomLocked();
                for (int i = offset; i < offset + length && room > 0; i++) {
                    ByteBuffer s = srcs[i];
                    int k = Math.min(s.remaining(), room);
                    ByteBuffer slice = s.slice();
                    slice.limit(k);
                    outbox.put(slice);
                    s.position(s.position() + k);
                    n += k;
                    room -= k;
                }
                if (n > 0) {
                    notifier = scheduleLocked(this);
                }
            }
            signal(notifier);
            return n;
        }

        @Override
        public void shutdownOutput() {
            Notifier notifier;
            synchronized (lock) {
                if (outputShut) {
                    return;
                }
                outputShut = true;
                finQueued = peer != null;
                notifier = scheduleLocked(this);
            }
            signal(notifier);
            fire();
        }

        @Override
        public void shutdownInput() {
            synchronized (lock) {
                // The bytes stay, unread, as in a TCP socket's receive queue: later reads return -1.
                inputShut = true;
                lock.notifyAll();
            }
            fire();
            MemConnection p = peer;
            if (p != null) {
                p.fire();
            }
        }

        @Override
        public int sendBufferSize() {
            return inbox.capacity();
        }

        @Override
        public int available() {
            progress();
            synchronized (lock) {
                return inputShut ? 0 : inbox.position();
            }
        }

        @Override
        public int readyOps() {
            synchronized (lock) {
                int ops = 0;
                if (failure != null || (!pending && connected && peer != null)) {
                    ops |= Readiness.CONNECT;
                }
                if (failure != null) {
                    return ops | Readiness.READ | Readiness.WRITE;
                }
                if (!connected) {
                    return ops;
                }
                if (inbox.position() > 0 || finReceived || reset || inputShut) {
                    ops |= Readiness.READ;
                }
                if (reset || outputShut || peer.closed || sendRoomLocked() > 0) {
                    ops |= Readiness.WRITE;
                }
                return ops;
            }
        }

        @Override
        public int await(int ops, long timeoutNanos) {
            return awaitReady(() -> readyOps() & ops, () -> closed, timeoutNanos);
        }

        @Override
        public void addReadinessListener(ReadinessListener l) {
            rls.add(l);
        }

        @Override
        public void removeReadinessListener(ReadinessListener l) {
            rls.remove(l);
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
        public Engine engine() {
            return InMemoryEngine.this;
        }

        @Override
        public void close() {
            boolean unread;
            synchronized (lock) {
                unread = inbox.position() > 0;
            }
            // As TCP: a close with received bytes unread is a reset.
            end(unread);
        }

        @Override
        public void abort() {
            end(true);
        }

        private void end(boolean abortive) {
            MemConnection p;
            Notifier notifier = null;
            synchronized (lock) {
                if (closed) {
                    return;
                }
                closed = true;
                p = peer;
                if (p != null) {
                    if (abortive) {
                        // Bytes within the peer's window have left, as TCP sends them at once; the reset follows.
                        if (outbox != null && outbox.position() > 0 && !p.closed) {
                            p.inbox.put(outbox.flip());
                        }
                        p.reset = true;
                        p.resetAfterFin = p.finReceived;
                        if (outbox != null) {
                            outbox.clear();
                        }
                    } else if (!outputShut) {
                        outputShut = true;
                        finQueued = true;
                        notifier = scheduleLocked(this);
                    }
                }
                lock.notifyAll();
            }
            signal(notifier);
            if (p != null && abortive) {
                p.fire();
            }
        }
    }
}
