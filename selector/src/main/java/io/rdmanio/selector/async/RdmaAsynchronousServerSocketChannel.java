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
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.util.ArrayList;
import java.util.List;
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
    private volatile AsynchronousServerSocketChannel jdk;
    private volatile ServerSocketChannel fabric;
    private volatile AsyncPoller poller;
    private SelectionKey key;
    private final List<Object[]> earlyOptions = new ArrayList<>();
    private final Object acceptLock = new Object();
    private Op<AsynchronousSocketChannel> accept;

    RdmaAsynchronousServerSocketChannel(AsyncGroup group) throws IOException {
        super(group.rdma());
        this.group = group;
        this.jdk = group.rdma().jdk().openAsynchronousServerSocketChannel(group.jdkGroup());
    }

    @Override
    public AsynchronousServerSocketChannel bind(SocketAddress local, int backlog) throws IOException {
        AsynchronousServerSocketChannel j = jdkOrClosed();
        if (fabric != null) {
            throw new AlreadyBoundException();
        }
        InetSocketAddress isa = local == null ? new InetSocketAddress(0) : checkAddress(local);
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
            synchronized (earlyOptions) {
                for (Object[] o : earlyOptions) {
                    setOption(ch, (SocketOption<?>) o[0], o[1]);
                }
            }
            ch.bind(local, backlog);
            poller = group.admit(this);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        fabric = ch;
        jdk = null;
        j.close();
        return this;
    }

    private static InetSocketAddress checkAddress(SocketAddress local) {
        if (!(local instanceof InetSocketAddress)) {
            throw new UnsupportedAddressTypeException();
        }
        InetSocketAddress isa = (InetSocketAddress) local;
        if (isa.isUnresolved()) {
            throw new UnresolvedAddressException();
        }
        return isa;
    }

    @SuppressWarnings("unchecked")
    private static <T> void setOption(ServerSocketChannel ch, SocketOption<T> name, Object value) throws IOException {
        ch.setOption(name, (T) value);
    }

    @Override
    public <A> void accept(A attachment, CompletionHandler<AsynchronousSocketChannel, ? super A> handler) {
        Objects.requireNonNull(handler, "handler");
        implAccept(attachment, handler);
    }

    @Override
    public Future<AsynchronousSocketChannel> accept() {
        return implAccept(null, null);
    }

    private <A> Future<AsynchronousSocketChannel> implAccept(A attachment,
            CompletionHandler<AsynchronousSocketChannel, ? super A> handler) {
        AsynchronousServerSocketChannel j = jdk;
        if (fabric == null && j != null) {
            return TcpCounting.accept(j, attachment, handler);
        }
        Op<AsynchronousSocketChannel> op = new Op<>(attachment, handler, this::cancel);
        ServerSocketChannel ch = fabric;
        if (ch == null || !ch.isOpen()) {
            op.complete(group, null, new ClosedChannelException());
            return op.future;
        }
        synchronized (acceptLock) {
            if (accept != null) {
                throw new AcceptPendingException();
            }
            accept = op;
        }
        if (!tryAccept(op)) {
            interestChanged();
        }
        return op.future;
    }

    private boolean tryAccept(Op<AsynchronousSocketChannel> op) {
        SocketChannel sc = null;
        Throwable failure = null;
        try {
            sc = fabric.accept();
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

    private void interestChanged() {
        AsyncPoller p = poller;
        if (p != null) {
            p.submit(this::updateInterest);
        }
    }

    private void updateInterest() {
        ServerSocketChannel ch = fabric;
        if (ch == null || !ch.isOpen()) {
            return;
        }
        int ops;
        synchronized (acceptLock) {
            ops = accept != null ? SelectionKey.OP_ACCEPT : 0;
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
            failAccept(e instanceof ClosedChannelException ? new AsynchronousCloseException() : e);
        }
    }

    @Override
    public void ready(SelectionKey k) {
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
        ServerSocketChannel ch = fabric;
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
        ServerSocketChannel ch = fabric;
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
        ServerSocketChannel ch = fabric;
        if (ch != null) {
            return ch.supportedOptions();
        }
        AsynchronousServerSocketChannel j = jdk;
        return j != null ? j.supportedOptions() : Set.of();
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        ServerSocketChannel ch = fabric;
        if (ch != null) {
            return ch.getLocalAddress();
        }
        return jdkOrClosed().getLocalAddress();
    }

    private AsynchronousServerSocketChannel jdkOrClosed() throws ClosedChannelException {
        AsynchronousServerSocketChannel j = jdk;
        if (j == null) {
            throw new ClosedChannelException();
        }
        return j;
    }

    @Override
    public boolean isOpen() {
        ServerSocketChannel ch = fabric;
        if (ch != null) {
            return ch.isOpen();
        }
        AsynchronousServerSocketChannel j = jdk;
        return j != null && j.isOpen();
    }

    @Override
    public void close() throws IOException {
        ServerSocketChannel ch = fabric;
        if (ch == null) {
            AsynchronousServerSocketChannel j = jdk;
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
            failAccept(new AsynchronousCloseException());
            group.closed(this);
        }
    }

    @Override
    public String toString() {
        ServerSocketChannel ch = fabric;
        return getClass().getSimpleName() + "[" + (ch != null ? ch : String.valueOf(jdk)) + "]";
    }
}
