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
import java.nio.channels.WritePendingException;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * rdmanio's {@link AsynchronousSocketChannel}. Until it connects it is the JDK's own channel (opened in the JDK's
 * group), and it stays that when the rules leave the connect on TCP: every call is handed over, so its behaviour
 * is the JDK's. A connect the rules route replaces it with an rdmanio socket channel in non-blocking mode (the
 * options set so far carried over, an address bound before connect bound again), driven by the group's
 * {@link AsyncPoller}:
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

    /**
     * One direction's slot: the operation waiting (at most one), and whether a timeout or cancel forbade the
     * direction or a shutdown closed it. Guarded by itself.
     */
    private static final class Direction {
        final boolean reading;
        /** Held while bytes move for the waiting operation. */
        final Object io = new Object();
        Op<Number> pending;
        boolean killed;
        boolean shutdown;

        Direction(boolean reading) {
            this.reading = reading;
        }

        /** Takes {@code op} out of the slot if it is still there. */
        synchronized boolean take(Op<?> op, boolean kill) {
            if (pending != op || op == null) {
                return false;
            }
            pending = null;
            killed |= kill;
            return true;
        }

        /**
         * Forbids the direction while {@code op} stays in the slot: it still moves bytes when the channel is ready,
         * its result unseen. Whether {@code op} was there.
         */
        synchronized boolean kill(Op<?> op) {
            if (pending != op || op == null) {
                return false;
            }
            killed = true;
            return true;
        }

        synchronized Op<Number> takeAny() {
            Op<Number> op = pending;
            pending = null;
            return op;
        }

        synchronized Op<Number> peek() {
            return pending;
        }
    }

    private final AsyncGroup group;
    private final RoutedEnd<AsynchronousSocketChannel, SocketChannel> end;
    private final Direction in = new Direction(true);
    private final Direction out = new Direction(false);
    private final Object connectLock = new Object();
    private Op<Void> connect;
    private volatile boolean connected;
    /** A read reported the connection's reset; later reads complete with -1 (under the reading direction's lock). */
    private boolean readResetReported;

    RdmaAsynchronousSocketChannel(AsyncGroup group) throws IOException {
        super(group.rdma());
        this.group = group;
        this.end = new RoutedEnd<>(group.rdma().jdk().openAsynchronousSocketChannel(group.jdkGroup()));
    }

    /** An accepted fabric (or, under a {@code both} rule, TCP) connection of a routed server. */
    RdmaAsynchronousSocketChannel(AsyncGroup group, SocketChannel accepted) throws IOException {
        super(group.rdma());
        this.group = group;
        AsyncPoller poller;
        try {
            accepted.configureBlocking(false);
            poller = group.admit(this);
        } catch (IOException | RuntimeException e) {
            accepted.close();
            throw e;
        }
        this.end = new RoutedEnd<>(accepted, poller);
        this.connected = true;
    }

    // ------------------------------------------------------------------ connect

    @Override
    public <A> void connect(SocketAddress remote, A attachment, CompletionHandler<Void, ? super A> handler) {
        Objects.requireNonNull(handler, "'handler' is null");
        implConnect(remote, attachment, handler);
    }

    @Override
    public Future<Void> connect(SocketAddress remote) {
        return implConnect(remote, null, null);
    }

    private <A> Future<Void> implConnect(SocketAddress remote, A attachment, CompletionHandler<Void, ? super A> handler) {
        AsynchronousSocketChannel j = end.jdkIfUnrouted();
        if (j != null) {
            Objects.requireNonNull(remote); // as the JDK's: no message
            InetSocketAddress isa = RoutedEnd.checkAddress(remote);
            Route r = null;
            SocketAddress bound;
            boolean open;
            try {
                bound = j.getLocalAddress();
                open = true;
            } catch (IOException e) {
                bound = null;
                open = false; // closed: the JDK's channel says so below
            }
            if (open) {
                r = group.rdma().selectors().config().router().forConnect(isa);
            }
            if (r == null || !r.usesFabric()) {
                if (r != null) {
                    RouteStats.connect(isa, r);
                }
                return TcpCounting.connect(j, remote, attachment, handler);
            }
            try {
                SocketChannel ch = group.rdma().selectors().openSocketChannel();
                try {
                    ch.configureBlocking(false);
                    end.carryOptionsTo(ch);
                    end.become(ch, group, this);
                    if (bound != null) {
                        // Bound before connect: the JDK's channel let its port go (closed above), the rdmanio
                        // channel binds it again and connects from there.
                        ch.bind(bound);
                    }
                } catch (IOException | RuntimeException e) {
                    ch.close();
                    throw e;
                }
            } catch (IOException | RuntimeException e) {
                Op<Void> op = new Op<>(attachment, handler, this::cancel);
                failConnect(op, e);
                return op.future;
            }
        }
        Op<Void> op = new Op<>(attachment, handler, this::cancel);
        SocketChannel ch = end.fabric();
        if (ch == null || !ch.isOpen()) {
            op.complete(group, null, new ClosedChannelException());
            return op.future;
        }
        Objects.requireNonNull(remote); // as the JDK's: the address before the state
        RoutedEnd.checkAddress(remote);
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
            if (takeConnect(op)) {
                failConnect(op, e);
            }
            return op.future;
        }
        if (done) {
            finishConnect();
        } else {
            end.interestChanged(this::updateInterest);
        }
        return op.future;
    }

    private boolean takeConnect(Op<?> op) {
        synchronized (connectLock) {
            if (connect != op || op == null) {
                return false;
            }
            connect = null;
            return true;
        }
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
            done = end.fabric().finishConnect();
        } catch (IOException | RuntimeException e) {
            if (takeConnect(op)) {
                failConnect(op, e);
            }
            return;
        }
        if (!done || !takeConnect(op)) {
            return;
        }
        connected = true;
        end.interestChanged(this::updateInterest);
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

    // ------------------------------------------------------------------ read and write

    @Override
    public <A> void read(ByteBuffer dst, long timeout, TimeUnit unit, A attachment,
                         CompletionHandler<Integer, ? super A> handler) {
        Objects.requireNonNull(handler, "'handler' is null");
        AsynchronousSocketChannel j = end.jdkIfUnrouted();
        if (j != null) {
            j.read(dst, timeout, unit, attachment, handler);
            return;
        }
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("Read-only buffer");
        }
        start(in, dst, null, 0, 0, timeout, unit, attachment, handler);
    }

    @Override
    public Future<Integer> read(ByteBuffer dst) {
        AsynchronousSocketChannel j = end.jdkIfUnrouted();
        if (j != null) {
            return j.read(dst);
        }
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("Read-only buffer");
        }
        return start(in, dst, null, 0, 0, 0, TimeUnit.MILLISECONDS, null, null);
    }

    @Override
    public <A> void read(ByteBuffer[] dsts, int offset, int length, long timeout, TimeUnit unit, A attachment,
                         CompletionHandler<Long, ? super A> handler) {
        Objects.requireNonNull(handler, "'handler' is null");
        AsynchronousSocketChannel j = end.jdkIfUnrouted();
        if (j != null) {
            j.read(dsts, offset, length, timeout, unit, attachment, handler);
            return;
        }
        checkRange(offset, length, dsts.length);
        start(in, null, dsts, offset, length, timeout, unit, attachment, handler);
    }

    @Override
    public <A> void write(ByteBuffer src, long timeout, TimeUnit unit, A attachment,
                          CompletionHandler<Integer, ? super A> handler) {
        Objects.requireNonNull(handler, "'handler' is null");
        AsynchronousSocketChannel j = end.jdkIfUnrouted();
        if (j != null) {
            j.write(src, timeout, unit, attachment, handler);
            return;
        }
        src.hasRemaining(); // as the JDK's: a null buffer is looked at first
        start(out, src, null, 0, 0, timeout, unit, attachment, handler);
    }

    @Override
    public Future<Integer> write(ByteBuffer src) {
        AsynchronousSocketChannel j = end.jdkIfUnrouted();
        if (j != null) {
            return j.write(src);
        }
        src.hasRemaining(); // as the JDK's: a null buffer is looked at first
        return start(out, src, null, 0, 0, 0, TimeUnit.MILLISECONDS, null, null);
    }

    @Override
    public <A> void write(ByteBuffer[] srcs, int offset, int length, long timeout, TimeUnit unit, A attachment,
                          CompletionHandler<Long, ? super A> handler) {
        Objects.requireNonNull(handler, "'handler' is null");
        AsynchronousSocketChannel j = end.jdkIfUnrouted();
        if (j != null) {
            j.write(srcs, offset, length, timeout, unit, attachment, handler);
            return;
        }
        checkRange(offset, length, srcs.length);
        start(out, null, srcs, offset, length, timeout, unit, attachment, handler);
    }

    /**
     * Starts a read or write on the routed channel, checking what the JDK's checks in its order: a read into a
     * read-only buffer is an argument error; a closed channel fails the operation; unconnected, forbidden or
     * pending throw; a read after shutdownInput completes with -1 and a write after shutdownOutput fails; an
     * operation with nothing to move completes with 0.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private <V extends Number, A> Future<V> start(Direction d, ByteBuffer buf, ByteBuffer[] bufs, int offset,
                                                  int length, long timeout, TimeUnit unit, A attachment,
                                                  CompletionHandler<V, ? super A> handler) {
        boolean vectored = bufs != null;
        if (d.reading) {
            for (int i = offset; i < (vectored ? offset + length : 0); i++) {
                if (bufs[i].isReadOnly()) {
                    throw new IllegalArgumentException("Read-only buffer");
                }
            }
        }
        Op<Number> op = new Op<>(attachment, (CompletionHandler) handler, this::cancel);
        Future<V> future = (Future<V>) (Future) op.future;
        if (!isOpen()) {
            op.complete(group, null, new ClosedChannelException());
            return future;
        }
        if (!connected) {
            throw new NotYetConnectedException();
        }
        boolean hasSome = vectored || buf.hasRemaining();
        boolean shutdown;
        synchronized (d) {
            if (d.killed) {
                throw new IllegalStateException((d.reading ? "Reading" : "Writing")
                        + " not allowed due to timeout or cancellation");
            }
            if (d.pending != null) {
                throw d.reading ? new ReadPendingException() : new WritePendingException();
            }
            shutdown = d.shutdown;
            if (!shutdown && hasSome) {
                d.pending = op;
            }
        }
        if (shutdown) {
            if (d.reading) {
                op.complete(group, vectored ? (Number) (-1L) : (Number) (-1), null);
            } else {
                op.complete(group, null, new ClosedChannelException());
            }
            return future;
        }
        if (!hasSome) {
            op.complete(group, vectored ? (Number) 0L : (Number) 0, null);
            return future;
        }
        op.buffer = buf;
        op.buffers = bufs;
        op.offset = offset;
        op.length = length;
        if (!attempt(d, op)) {
            if (timeout > 0) {
                try {
                    op.timer = group.rdma().timers().schedule(() -> timedOut(d, op), timeout, unit);
                } catch (RuntimeException e) {
                    // As the JDK's: a timeout it cannot set (a null unit) fails this operation, not the channel.
                    if (d.take(op, false)) {
                        op.complete(group, null, e);
                    }
                    return future;
                }
            }
            end.interestChanged(this::updateInterest);
        }
        return future;
    }

    /**
     * Reads or writes for a waiting {@code op}; returns whether it is no longer waiting. The caller that started
     * it and the poller may both try: one at a time, and only while {@code op} is still the one waiting, so no two
     * threads move bytes for one operation.
     */
    private boolean attempt(Direction d, Op<Number> op) {
        synchronized (d.io) {
            if (d.peek() != op) {
                return true;
            }
            return attemptLocked(d, op);
        }
    }

    private boolean attemptLocked(Direction d, Op<Number> op) {
        SocketChannel ch = end.fabric();
        long n;
        Throwable failure = null;
        try {
            if (d.reading) {
                n = op.scattering() ? ch.read(op.buffers, op.offset, op.length) : ch.read(op.buffer);
            } else {
                n = op.scattering() ? ch.write(op.buffers, op.offset, op.length) : ch.write(op.buffer);
            }
        } catch (IOException | RuntimeException e) {
            if (d.reading && isReadReset(e) && readResetReported) {
                // The JDK's asynchronous channel reports a reset to one read (the kernel's ECONNRESET, once);
                // later reads see end of stream, where the socket channel underneath remembers the reset.
                n = -1;
            } else {
                if (d.reading && isReadReset(e)) {
                    readResetReported = true;
                }
                failure = asTheJdksAsynchronousChannel(d, e);
                n = 0;
            }
        }
        if (failure == null && n == 0 && hasRemaining(op)) {
            // Nothing arrived (no window to write): wait. With no room (nothing to write) 0 is the result.
            return false;
        }
        if (d.take(op, false)) {
            op.complete(group, failure != null ? null : op.scattering() ? (Number) n : (Number) (int) n, failure);
        }
        return true;
    }

    /**
     * A socket channel's failure as the JDK's asynchronous channel reports it: a write that meets the output shut
     * down is a broken pipe (the kernel's EPIPE), a reset a plain {@code IOException} (its read and write are not
     * the socket channel's, which says {@code SocketException}), a close an {@link AsynchronousCloseException}.
     */
    private Throwable asTheJdksAsynchronousChannel(Direction d, Exception e) {
        if (e instanceof ClosedChannelException) {
            if (!d.reading && isOpen() && isShutdown(d)) {
                return new IOException("Broken pipe");
            }
            return e instanceof AsynchronousCloseException ? e : new AsynchronousCloseException();
        }
        if (e.getClass() == java.net.SocketException.class) {
            return new IOException(e.getMessage(), e);
        }
        return e;
    }

    /** A read's reset as the socket channel reports it (the JDK's {@code SocketException} "Connection reset"). */
    private static boolean isReadReset(Exception e) {
        return e.getClass() == java.net.SocketException.class && "Connection reset".equals(e.getMessage());
    }

    private static boolean isShutdown(Direction d) {
        synchronized (d) {
            return d.shutdown;
        }
    }

    private static boolean hasRemaining(Op<?> op) {
        if (!op.scattering()) {
            return op.buffer.hasRemaining();
        }
        for (int i = op.offset; i < op.offset + op.length; i++) {
            if (op.buffers[i].hasRemaining()) {
                return true;
            }
        }
        return false;
    }

    /** As the JDK's: a timed-out direction is forbidden from then on. */
    private void timedOut(Direction d, Op<Number> op) {
        if (d.take(op, true)) {
            end.interestChanged(this::updateInterest);
            op.complete(group, null, new InterruptedByTimeoutException());
        }
    }

    /**
     * A {@code Future}'s cancel: as the JDK's, the direction is forbidden from then on. {@code cancel(false)} of a
     * read or write leaves it in place, as the JDK's leaves its I/O pending: bytes that arrive still go into the
     * buffer (a write still sends), with nobody told. {@code cancel(true)} closes the channel.
     */
    private boolean cancel(Op<?> op, boolean mayInterruptIfRunning) {
        if (!mayInterruptIfRunning && (in.kill(op) || out.kill(op))) {
            if (op.timer != null) {
                op.timer.cancel(false);
            }
            return true;
        }
        if (!in.take(op, true) && !out.take(op, true) && !takeConnect(op)) {
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
            end.interestChanged(this::updateInterest);
        }
        return true;
    }

    /** Poller thread: watch the directions that have an operation waiting. */
    private void updateInterest() {
        int ops = (in.peek() != null ? SelectionKey.OP_READ : 0) | (out.peek() != null ? SelectionKey.OP_WRITE : 0);
        synchronized (connectLock) {
            ops |= connect != null ? SelectionKey.OP_CONNECT : 0;
        }
        Throwable failure = end.watch(ops, this);
        if (failure != null) {
            failAll(failure);
        }
    }

    @Override
    public void ready(SelectionKey k) {
        if (group.closingAll()) {
            return;
        }
        int ready = k.readyOps();
        if ((ready & SelectionKey.OP_CONNECT) != 0) {
            finishConnect();
        }
        // As the JDK's: with a read and a write both waiting and ready, the write goes first, so a reset is the
        // write's to report ("Connection reset by peer") and the read then sees end of stream.
        Op<Number> r = in.peek();
        Op<Number> w = out.peek();
        if (w != null && (ready & SelectionKey.OP_WRITE) != 0) {
            attempt(out, w);
        }
        if (r != null && (ready & SelectionKey.OP_READ) != 0) {
            attempt(in, r);
        }
        updateInterest();
    }

    /** Fails every waiting operation (close, or the poller cannot watch the channel). */
    private void failAll(Throwable failure) {
        for (Direction d : new Direction[] {in, out}) {
            Op<Number> op = d.takeAny();
            if (op != null) {
                op.complete(group, null, failure);
            }
        }
        Op<Void> c;
        synchronized (connectLock) {
            c = connect;
            connect = null;
        }
        if (c != null) {
            c.complete(group, null, failure);
        }
    }

    // ------------------------------------------------------------------ the rest of the channel

    @Override
    public AsynchronousSocketChannel bind(SocketAddress local) throws IOException {
        SocketChannel ch = end.fabric();
        if (ch != null) {
            ch.bind(local);
        } else {
            // Bound before connect: the JDK's channel binds (its errors, the kernel's port); connect still routes.
            end.jdkOrClosed().bind(local);
        }
        return this;
    }

    @Override
    public <T> AsynchronousSocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        boolean outputShutdown;
        synchronized (out) {
            outputShutdown = out.shutdown;
        }
        end.setOption(name, value, outputShutdown);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return end.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return end.supportedOptions();
    }

    @Override
    public AsynchronousSocketChannel shutdownInput() throws IOException {
        return shutdown(in);
    }

    @Override
    public AsynchronousSocketChannel shutdownOutput() throws IOException {
        return shutdown(out);
    }

    private AsynchronousSocketChannel shutdown(Direction d) throws IOException {
        SocketChannel ch = end.fabric();
        if (ch == null) {
            AsynchronousSocketChannel j = end.jdkOrClosed();
            if (d.reading) {
                j.shutdownInput();
            } else {
                j.shutdownOutput();
            }
            return this;
        }
        if (!ch.isOpen()) {
            throw new ClosedChannelException();
        }
        if (!connected) {
            throw new NotYetConnectedException();
        }
        synchronized (d) {
            if (!d.shutdown) {
                if (d.reading) {
                    ch.shutdownInput();
                } else {
                    ch.shutdownOutput();
                }
                d.shutdown = true;
            }
        }
        // As the kernel wakes the JDK's: a read waiting completes with -1, a write waiting fails (broken pipe).
        Op<Number> waiting = d.peek();
        if (waiting != null) {
            attempt(d, waiting);
        }
        return this;
    }

    @Override
    public SocketAddress getRemoteAddress() throws IOException {
        SocketChannel ch = end.fabric();
        if (ch == null) {
            return end.jdkOrClosed().getRemoteAddress();
        }
        if (!ch.isOpen()) {
            throw new ClosedChannelException();
        }
        return connected ? ch.getRemoteAddress() : null;
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        return end.localAddress();
    }

    @Override
    public boolean isOpen() {
        return end.isOpen();
    }

    @Override
    public void close() throws IOException {
        end.close(() -> {
            failAll(new AsynchronousCloseException());
            group.closed(this);
        });
    }

    /**
     * The range check of the JDK's scattering and gathering calls: a bare exception on JDK 17, the message of
     * {@link Objects#checkFromIndexSize} on later JDKs.
     */
    static void checkRange(int offset, int length, int size) {
        if (Runtime.version().feature() <= 17) {
            if (offset < 0 || length < 0 || offset > size - length) {
                throw new IndexOutOfBoundsException();
            }
        } else {
            Objects.checkFromIndexSize(offset, length, size);
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + end + "]";
    }
}
