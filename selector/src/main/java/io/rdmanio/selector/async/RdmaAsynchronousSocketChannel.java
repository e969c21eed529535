package io.rdmanio.selector.async;

import io.rdmanio.selector.config.Route;
import io.rdmanio.selector.config.RouteStats;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.CompletionHandler;
import java.nio.channels.ConnectionPendingException;
import java.nio.channels.InterruptedByTimeoutException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.ReadPendingException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.nio.channels.WritePendingException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * rdmanio's {@link AsynchronousSocketChannel}. Until it connects it is the JDK's own channel (opened in the JDK's
 * group), and it stays that when the rules leave the connect on TCP or it was bound first: every call is handed
 * over, so its behaviour is the JDK's. A connect the rules route replaces it with an rdmanio socket channel in
 * non-blocking mode (the options set so far carried over), driven by the group's {@link AsyncPoller}:
 *
 * <ul>
 *   <li>an operation that can complete at once (bytes waiting, room to write) does so on the caller's thread and
 *       its handler runs on the group's threads;</li>
 *   <li>otherwise it waits in its direction's slot (one read, one write, one connect at a time: the pending
 *       exceptions otherwise) and the poller completes it when the channel is ready;</li>
 *   <li>a timeout fails it with {@link InterruptedByTimeoutException} and, as the JDK's, forbids that direction
 *       from then on; so does cancelling its {@code Future} ({@code cancel(true)} also closes the channel);</li>
 *   <li>close fails whatever waits with {@link AsynchronousCloseException}.</li>
 * </ul>
 *
 * <p>Thread-safe: each direction's slot is guarded by its own lock; completions are delivered exactly once.
 */
final class RdmaAsynchronousSocketChannel extends AsynchronousSocketChannel implements AsyncPoller.Ready {

    private final AsyncGroup group;
    /** The JDK's channel: until routing decides, and for good when it decides TCP. */
    private volatile AsynchronousSocketChannel jdk;
    /** The routed (or accepted) channel, non-blocking. */
    private volatile SocketChannel fabric;
    private volatile AsyncPoller poller;
    private SelectionKey key;
    /** Options set before connect, carried over to a routed channel. */
    private final List<Object[]> earlyOptions = new ArrayList<>();

    private final Object readLock = new Object();
    private final Object writeLock = new Object();
    private final Object connectLock = new Object();
    private Op<Number> read;
    private Op<Number> write;
    private Op<Void> connect;
    private boolean readKilled;
    private boolean writeKilled;
    private boolean readShutdown;
    private boolean writeShutdown;
    private volatile boolean connected;

    RdmaAsynchronousSocketChannel(AsyncGroup group) throws IOException {
        super(group.rdma());
        this.group = group;
        this.jdk = group.rdma().jdk().openAsynchronousSocketChannel(group.jdkGroup());
    }

    /** An accepted fabric (or, under a {@code both} rule, TCP) connection of a routed server. */
    RdmaAsynchronousSocketChannel(AsyncGroup group, SocketChannel accepted) throws IOException {
        super(group.rdma());
        this.group = group;
        try {
            accepted.configureBlocking(false);
            this.poller = group.admit(this);
        } catch (IOException | RuntimeException e) {
            accepted.close();
            throw e;
        }
        this.fabric = accepted;
        this.connected = true;
    }

    // ------------------------------------------------------------------ connect

    @Override
    public <A> void connect(SocketAddress remote, A attachment, CompletionHandler<Void, ? super A> handler) {
        Objects.requireNonNull(handler, "handler");
        implConnect(remote, attachment, handler);
    }

    @Override
    public Future<Void> connect(SocketAddress remote) {
        return implConnect(remote, null, null);
    }

    private <A> Future<Void> implConnect(SocketAddress remote, A attachment, CompletionHandler<Void, ? super A> handler) {
        AsynchronousSocketChannel j = jdk;
        if (fabric == null && j != null) {
            InetSocketAddress isa = checkAddress(remote);
            Route r = null;
            boolean bound;
            try {
                bound = j.getLocalAddress() != null;
            } catch (IOException e) {
                bound = true; // closed: the JDK's channel says so below
            }
            if (!bound && j.isOpen()) {
                r = group.rdma().selectors().config().router().forConnect(isa);
            }
            if (r == null || !r.usesFabric()) {
                if (r != null) {
                    RouteStats.connect(isa, r);
                }
                return TcpCounting.connect(j, remote, attachment, handler);
            }
            Op<Void> failedOpen = routeToFabric(j, attachment, handler);
            if (failedOpen != null) {
                return failedOpen.future;
            }
        }
        Op<Void> op = new Op<>(attachment, handler, this::cancel);
        SocketChannel ch = fabric;
        if (ch == null || !ch.isOpen()) {
            op.complete(group, null, new ClosedChannelException());
            return op.future;
        }
        synchronized (connectLock) {
            if (connected) {
                throw new AlreadyConnectedException();
            }
            if (connect != null) {
                throw new ConnectionPendingException();
            }
            connect = op;
        }
        boolean done;
        try {
            done = ch.connect(remote);
        } catch (IOException | RuntimeException e) {
            synchronized (connectLock) {
                connect = null;
            }
            failConnect(op, e);
            return op.future;
        }
        if (done) {
            finishConnect();
        } else {
            interestChanged();
        }
        return op.future;
    }

    private static InetSocketAddress checkAddress(SocketAddress remote) {
        Objects.requireNonNull(remote, "remote");
        if (!(remote instanceof InetSocketAddress)) {
            throw new UnsupportedAddressTypeException();
        }
        InetSocketAddress isa = (InetSocketAddress) remote;
        if (isa.isUnresolved()) {
            throw new UnresolvedAddressException();
        }
        return isa;
    }

    /**
     * Replaces the JDK channel by an rdmanio one carrying its options; returns a failed operation if that cannot
     * be done (the channel is then closed), null when done.
     */
    private <A> Op<Void> routeToFabric(AsynchronousSocketChannel j, A attachment,
                                       CompletionHandler<Void, ? super A> handler) {
        SocketChannel ch = null;
        try {
            ch = group.rdma().selectors().openSocketChannel();
            ch.configureBlocking(false);
            synchronized (earlyOptions) {
                for (Object[] o : earlyOptions) {
                    setOption(ch, (SocketOption<?>) o[0], o[1]);
                }
            }
            poller = group.admit(this);
            fabric = ch;
            jdk = null;
            j.close();
            return null;
        } catch (IOException | RuntimeException e) {
            if (ch != null) {
                try {
                    ch.close();
                } catch (IOException ignore) {
                    // failing already
                }
            }
            try {
                j.close();
            } catch (IOException ignore) {
                // failing already
            }
            Op<Void> op = new Op<>(attachment, handler, this::cancel);
            op.complete(group, null, e);
            return op;
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> void setOption(SocketChannel ch, SocketOption<T> name, Object value) throws IOException {
        ch.setOption(name, (T) value);
    }

    /** On the poller (or the caller, when the connect completed at once). */
    private void finishConnect() {
        Op<Void> op;
        synchronized (connectLock) {
            op = connect;
        }
        if (op == null) {
            return;
        }
        boolean done;
        try {
            done = fabric.finishConnect();
        } catch (IOException | RuntimeException e) {
            synchronized (connectLock) {
                if (connect != op) {
                    return;
                }
                connect = null;
            }
            failConnect(op, e);
            return;
        }
        if (!done) {
            return;
        }
        synchronized (connectLock) {
            if (connect != op) {
                return;
            }
            connect = null;
            connected = true;
        }
        interestChanged();
        op.complete(group, null, null);
    }

    /** As the JDK's: a connect that fails closes the channel. */
    private void failConnect(Op<Void> op, Throwable e) {
        Throwable failure = e instanceof ClosedChannelException && !(e instanceof AsynchronousCloseException)
                ? new AsynchronousCloseException() : e;
        try {
            close();
        } catch (IOException suppressed) {
            failure.addSuppressed(suppressed);
        }
        op.complete(group, null, failure);
    }

    // ------------------------------------------------------------------ read

    @Override
    public <A> void read(ByteBuffer dst, long timeout, TimeUnit unit, A attachment,
                         CompletionHandler<Integer, ? super A> handler) {
        Objects.requireNonNull(handler, "handler");
        AsynchronousSocketChannel j = jdk;
        if (fabric == null && j != null) {
            j.read(dst, timeout, unit, attachment, handler);
            return;
        }
        implRead(dst, null, 0, 0, timeout, unit, attachment, handler);
    }

    @Override
    public Future<Integer> read(ByteBuffer dst) {
        AsynchronousSocketChannel j = jdk;
        if (fabric == null && j != null) {
            return j.read(dst);
        }
        return implRead(dst, null, 0, 0, 0, TimeUnit.MILLISECONDS, null, null);
    }

    @Override
    public <A> void read(ByteBuffer[] dsts, int offset, int length, long timeout, TimeUnit unit, A attachment,
                         CompletionHandler<Long, ? super A> handler) {
        Objects.requireNonNull(handler, "handler");
        AsynchronousSocketChannel j = jdk;
        if (fabric == null && j != null) {
            j.read(dsts, offset, length, timeout, unit, attachment, handler);
            return;
        }
        Objects.checkFromIndexSize(offset, length, dsts.length);
        implRead(null, dsts, offset, length, timeout, unit, attachment, handler);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private <V extends Number, A> Future<V> implRead(ByteBuffer dst, ByteBuffer[] dsts, int offset, int length,
                                                     long timeout, TimeUnit unit, A attachment,
                                                     CompletionHandler<V, ? super A> handler) {
        boolean scattering = dsts != null;
        if (scattering) {
            for (int i = offset; i < offset + length; i++) {
                if (dsts[i].isReadOnly()) {
                    throw new IllegalArgumentException("Read-only buffer");
                }
            }
        } else if (dst.isReadOnly()) {
            throw new IllegalArgumentException("Read-only buffer");
        }
        Op<Number> op = new Op<>(attachment, (CompletionHandler) handler, this::cancel);
        if (!isOpen()) {
            op.complete(group, null, new ClosedChannelException());
            return (Future<V>) (Future) op.future;
        }
        if (!connected) {
            throw new NotYetConnectedException();
        }
        boolean hasSpace = scattering || dst.hasRemaining();
        boolean shutdown;
        synchronized (readLock) {
            if (readKilled) {
                throw new IllegalStateException("Reading not allowed due to timeout or cancellation");
            }
            if (read != null) {
                throw new ReadPendingException();
            }
            shutdown = readShutdown;
            if (!shutdown && hasSpace) {
                read = op;
            }
        }
        if (shutdown || !hasSpace) {
            Number n = scattering ? (Number) (shutdown ? -1L : 0L) : (Number) (shutdown ? -1 : 0);
            op.complete(group, n, null);
            return (Future<V>) (Future) op.future;
        }
        op.buffer = dst;
        op.buffers = dsts;
        op.offset = offset;
        op.length = length;
        if (!tryRead(op)) {
            arm(op, timeout, unit, true);
        }
        return (Future<V>) (Future) op.future;
    }

    /** Reads for a pending {@code op}; returns whether it completed (it is then out of its slot). */
    private boolean tryRead(Op<Number> op) {
        long n;
        Throwable failure = null;
        try {
            n = op.scattering() ? fabric.read(op.buffers, op.offset, op.length) : fabric.read(op.buffer);
        } catch (IOException | RuntimeException e) {
            failure = e instanceof ClosedChannelException ? new AsynchronousCloseException() : e;
            n = 0;
        }
        if (failure == null && n == 0) {
            return false;
        }
        synchronized (readLock) {
            if (read != op) {
                return true; // timed out, cancelled or closed meanwhile: already told
            }
            read = null;
        }
        op.complete(group, failure != null ? null : op.scattering() ? (Number) n : (Number) (int) n, failure);
        return true;
    }

    // ------------------------------------------------------------------ write

    @Override
    public <A> void write(ByteBuffer src, long timeout, TimeUnit unit, A attachment,
                          CompletionHandler<Integer, ? super A> handler) {
        Objects.requireNonNull(handler, "handler");
        AsynchronousSocketChannel j = jdk;
        if (fabric == null && j != null) {
            j.write(src, timeout, unit, attachment, handler);
            return;
        }
        implWrite(src, null, 0, 0, timeout, unit, attachment, handler);
    }

    @Override
    public Future<Integer> write(ByteBuffer src) {
        AsynchronousSocketChannel j = jdk;
        if (fabric == null && j != null) {
            return j.write(src);
        }
        return implWrite(src, null, 0, 0, 0, TimeUnit.MILLISECONDS, null, null);
    }

    @Override
    public <A> void write(ByteBuffer[] srcs, int offset, int length, long timeout, TimeUnit unit, A attachment,
                          CompletionHandler<Long, ? super A> handler) {
        Objects.requireNonNull(handler, "handler");
        AsynchronousSocketChannel j = jdk;
        if (fabric == null && j != null) {
            j.write(srcs, offset, length, timeout, unit, attachment, handler);
            return;
        }
        Objects.checkFromIndexSize(offset, length, srcs.length);
        implWrite(null, srcs, offset, length, timeout, unit, attachment, handler);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private <V extends Number, A> Future<V> implWrite(ByteBuffer src, ByteBuffer[] srcs, int offset, int length,
                                                      long timeout, TimeUnit unit, A attachment,
                                                      CompletionHandler<V, ? super A> handler) {
        boolean gathering = srcs != null;
        Op<Number> op = new Op<>(attachment, (CompletionHandler) handler, this::cancel);
        boolean hasData = gathering || src.hasRemaining();
        boolean closed = !isOpen();
        if (!closed) {
            if (!connected) {
                throw new NotYetConnectedException();
            }
            synchronized (writeLock) {
                if (writeKilled) {
                    throw new IllegalStateException("Writing not allowed due to timeout or cancellation");
                }
                if (write != null) {
                    throw new WritePendingException();
                }
                closed = writeShutdown;
                if (!closed && hasData) {
                    write = op;
                }
            }
        }
        if (closed) {
            op.complete(group, null, new ClosedChannelException());
            return (Future<V>) (Future) op.future;
        }
        if (!hasData) {
            op.complete(group, gathering ? (Number) 0L : (Number) 0, null);
            return (Future<V>) (Future) op.future;
        }
        op.buffer = src;
        op.buffers = srcs;
        op.offset = offset;
        op.length = length;
        if (!tryWrite(op)) {
            arm(op, timeout, unit, false);
        }
        return (Future<V>) (Future) op.future;
    }

    private boolean tryWrite(Op<Number> op) {
        long n;
        Throwable failure = null;
        try {
            n = op.scattering() ? fabric.write(op.buffers, op.offset, op.length) : fabric.write(op.buffer);
        } catch (IOException | RuntimeException e) {
            failure = e instanceof ClosedChannelException ? new AsynchronousCloseException() : e;
            n = 0;
        }
        if (failure == null && n == 0 && (op.scattering() ? hasRemaining(op) : op.buffer.hasRemaining())) {
            return false;
        }
        synchronized (writeLock) {
            if (write != op) {
                return true;
            }
            write = null;
        }
        op.complete(group, failure != null ? null : op.scattering() ? (Number) n : (Number) (int) n, failure);
        return true;
    }

    private static boolean hasRemaining(Op<?> op) {
        for (int i = op.offset; i < op.offset + op.length; i++) {
            if (op.buffers[i].hasRemaining()) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ waiting, timeouts, cancel

    /** {@code op} waits: its timer (if any) started and the poller told to watch its direction. */
    private void arm(Op<Number> op, long timeout, TimeUnit unit, boolean reading) {
        if (timeout > 0) {
            op.timer = group.rdma().timers().schedule(() -> timedOut(op, reading), timeout, unit);
        }
        interestChanged();
    }

    private void timedOut(Op<Number> op, boolean reading) {
        synchronized (reading ? readLock : writeLock) {
            if (reading) {
                if (read != op) {
                    return;
                }
                read = null;
                readKilled = true;
            } else {
                if (write != op) {
                    return;
                }
                write = null;
                writeKilled = true;
            }
        }
        interestChanged();
        op.complete(group, null, new InterruptedByTimeoutException());
    }

    /** A {@code Future}'s cancel: as the JDK's, the direction is forbidden from then on. */
    private boolean cancel(Op<?> op, boolean mayInterruptIfRunning) {
        boolean was = false;
        synchronized (readLock) {
            if (read == op) {
                read = null;
                readKilled = true;
                was = true;
            }
        }
        synchronized (writeLock) {
            if (write == op) {
                write = null;
                writeKilled = true;
                was = true;
            }
        }
        synchronized (connectLock) {
            if (connect == op) {
                connect = null;
                was = true;
            }
        }
        if (!was) {
            return false;
        }
        if (op.timer != null) {
            op.timer.cancel(false);
        }
        if (mayInterruptIfRunning) {
            try {
                close();
            } catch (IOException ignore) {
                // cancelled either way
            }
        } else {
            interestChanged();
        }
        return true;
    }

    /** Recomputes what the poller watches for, on the poller thread. */
    private void interestChanged() {
        AsyncPoller p = poller;
        if (p != null) {
            p.submit(this::updateInterest);
        }
    }

    private void updateInterest() {
        SocketChannel ch = fabric;
        if (ch == null || !ch.isOpen()) {
            return;
        }
        int ops;
        synchronized (readLock) {
            ops = read != null ? SelectionKey.OP_READ : 0;
        }
        synchronized (writeLock) {
            ops |= write != null ? SelectionKey.OP_WRITE : 0;
        }
        synchronized (connectLock) {
            ops |= connect != null ? SelectionKey.OP_CONNECT : 0;
        }
        try {
            if (key == null) {
                if (ops == 0) {
                    return;
                }
                key = ch.register(poller.selector(), ops, this);
            } else if (key.isValid()) {
                key.interestOps(ops);
            }
        } catch (IOException | RuntimeException e) {
            failAll(e instanceof ClosedChannelException ? new AsynchronousCloseException() : e);
        }
    }

    @Override
    public void ready(SelectionKey k) {
        int ready = k.readyOps();
        if ((ready & SelectionKey.OP_CONNECT) != 0) {
            finishConnect();
        }
        Op<Number> r;
        synchronized (readLock) {
            r = read;
        }
        if (r != null && (ready & SelectionKey.OP_READ) != 0) {
            tryRead(r);
        }
        Op<Number> w;
        synchronized (writeLock) {
            w = write;
        }
        if (w != null && (ready & SelectionKey.OP_WRITE) != 0) {
            tryWrite(w);
        }
        updateInterest();
    }

    /** Fails every waiting operation (close, or the poller cannot watch the channel). */
    private void failAll(Throwable failure) {
        Op<Number> r;
        Op<Number> w;
        Op<Void> c;
        synchronized (readLock) {
            r = read;
            read = null;
        }
        synchronized (writeLock) {
            w = write;
            write = null;
        }
        synchronized (connectLock) {
            c = connect;
            connect = null;
        }
        if (r != null) {
            r.complete(group, null, failure);
        }
        if (w != null) {
            w.complete(group, null, failure);
        }
        if (c != null) {
            c.complete(group, null, failure);
        }
    }

    // ------------------------------------------------------------------ the rest of the channel

    @Override
    public AsynchronousSocketChannel bind(SocketAddress local) throws IOException {
        SocketChannel ch = fabric;
        if (ch != null) {
            ch.bind(local);
            return this;
        }
        // Bound before connect: as with socket channels, never routed.
        jdkOrClosed().bind(local);
        return this;
    }

    @Override
    public <T> AsynchronousSocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        SocketChannel ch = fabric;
        if (ch != null) {
            if (!ch.supportedOptions().contains(name)) {
                throw new UnsupportedOperationException("'" + name + "' not supported");
            }
            ch.setOption(name, value);
            return this;
        }
        jdkOrClosed().setOption(name, value);
        synchronized (earlyOptions) {
            earlyOptions.add(new Object[] {name, value});
        }
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        SocketChannel ch = fabric;
        if (ch != null) {
            if (!ch.supportedOptions().contains(name)) {
                throw new UnsupportedOperationException("'" + name + "' not supported");
            }
            return ch.getOption(name);
        }
        return jdkOrClosed().getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        SocketChannel ch = fabric;
        if (ch != null) {
            return ch.supportedOptions();
        }
        AsynchronousSocketChannel j = jdk;
        return j != null ? j.supportedOptions() : Set.of();
    }

    @Override
    public AsynchronousSocketChannel shutdownInput() throws IOException {
        SocketChannel ch = fabric;
        if (ch == null) {
            jdkOrClosed().shutdownInput();
            return this;
        }
        if (!connected) {
            throw new NotYetConnectedException();
        }
        synchronized (readLock) {
            if (!readShutdown) {
                ch.shutdownInput();
                readShutdown = true;
            }
        }
        return this;
    }

    @Override
    public AsynchronousSocketChannel shutdownOutput() throws IOException {
        SocketChannel ch = fabric;
        if (ch == null) {
            jdkOrClosed().shutdownOutput();
            return this;
        }
        if (!connected) {
            throw new NotYetConnectedException();
        }
        synchronized (writeLock) {
            if (!writeShutdown) {
                ch.shutdownOutput();
                writeShutdown = true;
            }
        }
        return this;
    }

    @Override
    public SocketAddress getRemoteAddress() throws IOException {
        SocketChannel ch = fabric;
        if (ch != null) {
            if (!ch.isOpen()) {
                throw new ClosedChannelException();
            }
            return connected ? ch.getRemoteAddress() : null;
        }
        return jdkOrClosed().getRemoteAddress();
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        SocketChannel ch = fabric;
        if (ch != null) {
            return ch.getLocalAddress();
        }
        return jdkOrClosed().getLocalAddress();
    }

    private AsynchronousSocketChannel jdkOrClosed() throws ClosedChannelException {
        AsynchronousSocketChannel j = jdk;
        if (j == null) {
            throw new ClosedChannelException();
        }
        return j;
    }

    @Override
    public boolean isOpen() {
        SocketChannel ch = fabric;
        if (ch != null) {
            return ch.isOpen();
        }
        AsynchronousSocketChannel j = jdk;
        return j != null && j.isOpen();
    }

    @Override
    public void close() throws IOException {
        SocketChannel ch = fabric;
        if (ch == null) {
            AsynchronousSocketChannel j = jdk;
            if (j != null) {
                j.close();
            }
            return;
        }
        if (!ch.isOpen()) {
            return;
        }
        try {
            ch.close();
        } finally {
            failAll(new AsynchronousCloseException());
            group.closed(this);
        }
    }

    @Override
    public String toString() {
        SocketChannel ch = fabric;
        return getClass().getSimpleName() + "[" + (ch != null ? ch : String.valueOf(jdk)) + "]";
    }
}
