package io.rdmanio.selector.async;

import io.rdmanio.selector.config.Route;
import io.rdmanio.selector.config.RouteStats;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.nio.channels.AcceptPendingException;
import java.nio.channels.AlreadyBoundException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.CompletionHandler;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Future;

/**
 * rdmanio's {@link AsynchronousServerSocketChannel}: the JDK's own until it binds, and for good when the rules
 * leave the bind on TCP; a bind the rules route makes it an rdmanio server socket channel in non-blocking mode
 * (options carried over), whose accepts the group's poller completes with {@link RdmaAsynchronousSocketChannel}s.
 * One accept at a time ({@link AcceptPendingException} otherwise); close fails a waiting accept with
 * {@link AsynchronousCloseException}. Thread-safe.
 */
final class RdmaAsynchronousServerSocketChannel extends AsynchronousServerSocketChannel
        implements AsyncPoller.Ready {

    private final AsyncGroup group;
    private final RoutedEnd<AsynchronousServerSocketChannel, ServerSocketChannel> end;
    private final Object acceptLock = new Object();
    /** Held while a connection is taken for the waiting accept. */
    private final Object acceptIo = new Object();
    private Op<AsynchronousSocketChannel> accept;
    /** A {@code Future}'s cancel took a waiting accept: no accept is allowed after it (under acceptLock). */
    private boolean acceptKilled;

    RdmaAsynchronousServerSocketChannel(AsyncGroup group) throws IOException {
        super(group.rdma());
        this.group = group;
        this.end = new RoutedEnd<>(group.rdma().jdk().openAsynchronousServerSocketChannel(group.jdkGroup()));
    }

    @Override
    public AsynchronousServerSocketChannel bind(SocketAddress local, int backlog) throws IOException {
        ServerSocketChannel routed = end.fabric();
        if (routed != null) {
            // Bound already (the JDK's channel, which the routed one replaced, is gone).
            if (!routed.isOpen()) {
                throw new java.nio.channels.ClosedChannelException();
            }
            throw new AlreadyBoundException();
        }
        AsynchronousServerSocketChannel j = end.jdkOrClosed();
        InetSocketAddress isa = local == null ? new InetSocketAddress(0) : RoutedEnd.checkAddress(local);
        Route r = j.getLocalAddress() == null
                ? group.rdma().selectors().config().router().forBind(isa) : Route.NO_MATCH;
        if (!r.usesFabric()) {
            RouteStats.bind(isa, r);
            j.bind(local, backlog);
            return this;
        }
        ServerSocketChannel ch = group.rdma().selectors().openServerSocketChannel();
        try {
            ch.configureBlocking(false);
            end.carryOptionsTo(ch);
            // The rdmanio channel routes the bind itself (and counts it); a failed bind leaves this channel open
            // and unbound, as the JDK's.
            ch.bind(local, backlog);
            end.become(ch, group, this);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        return this;
    }

    @Override
    public <A> void accept(A attachment, CompletionHandler<AsynchronousSocketChannel, ? super A> handler) {
        Objects.requireNonNull(handler, "'handler' is null");
        implAccept(attachment, handler);
    }

    @Override
    public Future<AsynchronousSocketChannel> accept() {
        return implAccept(null, null);
    }

    private <A> Future<AsynchronousSocketChannel> implAccept(A attachment,
            CompletionHandler<AsynchronousSocketChannel, ? super A> handler) {
        AsynchronousServerSocketChannel j = end.jdkIfUnrouted();
        if (j != null) {
            return TcpCounting.accept(j, attachment, handler);
        }
        Op<AsynchronousSocketChannel> op = new Op<>(attachment, handler, this::cancel);
        ServerSocketChannel ch = end.fabric();
        if (ch == null || !ch.isOpen()) {
            op.complete(group, null, new ClosedChannelException());
            return op.future;
        }
        synchronized (acceptLock) {
            if (acceptKilled) {
                // As the JDK's: a cancelled accept may have taken a connection that nobody got.
                throw new RuntimeException("Accept not allowed due cancellation");
            }
            if (accept != null) {
                throw new AcceptPendingException();
            }
            accept = op;
        }
        if (!tryAccept(op)) {
            end.interestChanged(this::updateInterest);
        }
        return op.future;
    }

    /**
     * Accepts for a waiting {@code op}; returns whether it is no longer waiting. The caller and the poller may
     * both try: one at a time, and only while {@code op} still waits, so no connection is taken for nobody.
     */
    private boolean tryAccept(Op<AsynchronousSocketChannel> op) {
        synchronized (acceptIo) {
            synchronized (acceptLock) {
                if (accept != op) {
                    return true;
                }
            }
            return tryAcceptLocked(op);
        }
    }

    private boolean tryAcceptLocked(Op<AsynchronousSocketChannel> op) {
        SocketChannel sc = null;
        Throwable failure = null;
        try {
            sc = end.fabric().accept();
        } catch (IOException | RuntimeException e) {
            failure = e instanceof ClosedChannelException ? new AsynchronousCloseException() : e;
        }
        if (sc == null && failure == null) {
            return false;
        }
        synchronized (acceptLock) {
            if (accept != op) {
                if (sc != null) {
                    closeQuietly(sc);
                }
                return true;
            }
            accept = null;
        }
        AsynchronousSocketChannel result = null;
        if (sc != null) {
            try {
                result = new RdmaAsynchronousSocketChannel(group, sc);
            } catch (IOException | RuntimeException e) {
                failure = e;
            }
        }
        op.complete(group, result, failure);
        return true;
    }

    private static void closeQuietly(SocketChannel sc) {
        try {
            sc.close();
        } catch (IOException ignore) {
            // nobody took it
        }
    }

    /** A {@code Future}'s cancel of a waiting accept ({@code cancel(true)} closes the channel, as the JDK's). */
    private boolean cancel(Op<?> op, boolean mayInterruptIfRunning) {
        synchronized (acceptLock) {
            if (accept != op) {
                return false;
            }
            accept = null;
            acceptKilled = true;
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

    private void updateInterest() {
        int ops;
        synchronized (acceptLock) {
            ops = accept != null ? SelectionKey.OP_ACCEPT : 0;
        }
        Throwable failure = end.watch(ops, this);
        if (failure != null) {
            failAccept(failure);
        }
    }

    @Override
    public void ready(SelectionKey k) {
        if (group.closingAll()) {
            return;
        }
        Op<AsynchronousSocketChannel> op;
        synchronized (acceptLock) {
            op = accept;
        }
        if (op != null && (k.readyOps() & SelectionKey.OP_ACCEPT) != 0) {
            tryAccept(op);
        }
        updateInterest();
    }

    private void failAccept(Throwable failure) {
        Op<AsynchronousSocketChannel> op;
        synchronized (acceptLock) {
            op = accept;
            accept = null;
        }
        if (op != null) {
            op.complete(group, null, failure);
        }
    }

    @Override
    public <T> AsynchronousServerSocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        end.setOption(name, value);
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
            failAccept(new AsynchronousCloseException());
            group.closed(this);
        });
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + end + "]";
    }
}
