package io.rdmanio.selector;

import io.rdmanio.core.Logs;
import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.Readiness;
import io.rdmanio.core.engine.ReadinessListener;
import io.rdmanio.selector.config.Action;
import io.rdmanio.selector.config.FallbackSetting;
import io.rdmanio.selector.config.Route;
import io.rdmanio.selector.config.RouteStats;
import io.rdmanio.selector.config.RunStats;
import java.io.Closeable;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProtocolFamily;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AlreadyBoundException;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ConnectionPendingException;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.NoConnectionPendingException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;

/**
 * A socket channel routed once, at connect, by the router's connect rules. Routed to TCP it forwards to a JDK
 * {@link SocketChannel} (options set earlier are replayed onto it, the blocking mode is mirrored); routed to a
 * fabric it drives an engine {@link Connection}. A channel bound before it connects binds a JDK channel at once
 * (the JDK's errors, the kernel's port): that channel becomes the TCP route's body, or, on a fabric route, holds
 * the port for the connection, which connects from its address.
 *
 * <p>Thread-safe as the JDK's channel: one reader and one writer at a time (read and write locks), state under
 * the state lock. Lock order: read lock, write lock, blocking lock, state lock. Never block holding the state
 * lock. Blocking and non-blocking operations share one path: blocking means "retry until ready or closed",
 * waiting inside {@code begin()/end()} so that an interrupt closes the channel and a close wakes the waiter.
 */
final class RdmaSocketChannel extends SocketChannel implements RoutedChannel {

    private static final int ST_UNCONNECTED = 0;
    private static final int ST_PENDING = 1;
    private static final int ST_CONNECTED = 2;
    private static final int ST_CLOSED = 3;

    private static final Logger LOG = Logs.get(RdmaSocketChannel.class);

    private final RdmaSelectorProvider rdma;
    private final ReentrantLock readLock = new ReentrantLock();
    private final ReentrantLock writeLock = new ReentrantLock();
    /** The blocking mode as {@link #implConfigureBlocking} last set it (under the read and write locks). */
    private volatile boolean blockingMode = true;
    private final Object stateLock = new Object();

    // -- read lock
    private final ByteBuffer[] readOne = new ByteBuffer[1];
    // -- write lock
    private final ByteBuffer[] writeOne = new ByteBuffer[1];

    // -- read and write locks (both are held to connect)
    /** A client under a {@code both} rule while its fabric handshake is under way. */
    private boolean fallbackToTcp;
    /** Then, when it goes to TCP instead ({@link System#nanoTime()}; 0: none). Read by selectors too. */
    private volatile long fallbackDeadline;

    // -- written under the state lock, read anywhere
    private volatile int route;
    private volatile SocketChannel delegate;
    /**
     * What a bind before connect bound, until routing decides: a JDK channel (this channel's own bind), which
     * becomes the TCP route's delegate, or a java.net socket handed over at connect ({@link #holdPort}). On a
     * fabric route it holds the connection's port, and closes with this channel.
     */
    private volatile Closeable boundHolder;
    /** The address {@link #boundHolder} is bound to (state lock). */
    private InetSocketAddress boundAddress;
    private volatile Connection connection;
    /**
     * The family the channel was opened with ({@code SelectorProvider.openSocketChannel(ProtocolFamily)}), or null
     * for the JDK's default. {@code INET} takes IPv4 addresses only, as the JDK's: its kernel sockets are opened in
     * that family, so a bind finds the address as theirs does.
     */
    private final ProtocolFamily family;
    /** Closed while a selector held it: the connection whose close waits for its last key to go (stateLock). */
    private Connection deferredClose;
    private volatile int state;
    /** The fabric connection was established (accepted, or a connect completed); its address is then this end's. */
    private volatile boolean established;
    private volatile boolean inputShutdown;
    private volatile boolean outputShutdown;
    /** The body of a java.net Socket: interrupts as java.net's ({@link #actAsJavaNetSocket}). */
    private volatile boolean javaNetSocket;

    // -- state lock
    private InetSocketAddress remoteAddress;
    private boolean counted;
    /** Why the fabric could not connect a client that fell back to TCP: named too if TCP fails. */
    private volatile IOException fallbackCause;
    /**
     * A fallback to TCP started by a selector failed at once: OP_CONNECT was reported, and finishConnect throws
     * this (and closes the channel), as the JDK's does for a refused connect.
     */
    private volatile IOException deferredConnectFailure;
    private final Map<SocketOption<?>, Object> options = new HashMap<>();
    /** What getOption reports for the options set: as the kernel rounds them ({@link JdkDefaults#normalized}). */
    private final Map<SocketOption<?>, Object> shown = new HashMap<>();
    private final List<RdmaSelectionKey> keys = new ArrayList<>(2);
    private Socket socket;

    RdmaSocketChannel(RdmaSelectorProvider provider, ProtocolFamily family) {
        super(provider);
        this.rdma = provider;
        this.family = family;
    }

    /**
     * A new unconnected channel. The provider opens channels through this method, whose declared type is the JDK's:
     * verifying the provider then does not load this class, which cannot be loaded without {@code sun.nio.ch}
     * exported (see {@link #getFD}), so a JVM started without the export reaches the provider's own error naming
     * the flag instead of an {@link IllegalAccessError}.
     */
    static SocketChannel open(RdmaSelectorProvider provider, ProtocolFamily family) {
        return new RdmaSocketChannel(provider, family);
    }

    /** An accepted TCP connection. */
    RdmaSocketChannel(RdmaSelectorProvider provider, ProtocolFamily family, SocketChannel accepted) {
        super(provider);
        this.rdma = provider;
        this.family = family;
        this.delegate = accepted;
        this.route = ROUTE_DELEGATE;
        this.state = ST_CONNECTED;
        this.counted = true;
        RunStats.get().connectionOpened(false);
    }

    /** An accepted fabric connection. */
    RdmaSocketChannel(RdmaSelectorProvider provider, ProtocolFamily family, Connection accepted,
                      Map<SocketOption<?>, Object> inherited, Map<SocketOption<?>, Object> inheritedShown) {
        super(provider);
        this.rdma = provider;
        this.family = family;
        this.connection = accepted;
        this.route = ROUTE_FABRIC;
        this.state = ST_CONNECTED;
        this.established = true;
        this.remoteAddress = withoutHostName(accepted.remoteAddress());
        this.counted = true;
        this.options.putAll(inherited);
        this.shown.putAll(inheritedShown);
        accepted.setLingerZero(Integer.valueOf(0).equals(inherited.get(StandardSocketOptions.SO_LINGER)));
        accepted.setOobInline(oobInline(inherited));
        RunStats.get().connectionOpened(true);
    }

    // ------------------------------------------------------------------ routing

    @Override
    public int route() {
        return route;
    }

    @Override
    public SelectableChannel delegate() {
        return delegate;
    }

    SocketChannel delegateChannel() {
        return delegate;
    }

    @Override
    public Engine fabricEngine() {
        Connection c = connection;
        return c == null ? null : c.engine();
    }

    @Override
    public int fabricReadyOps() {
        Connection c = connection;
        if (c == null) {
            return 0;
        }
        int ops = c.readyOps();
        if (state != ST_PENDING) {
            // As the JDK: OP_CONNECT is ready only while a connection is pending.
            ops &= ~SelectionKey.OP_CONNECT;
        } else if (fallbackDeadline != 0
                && ((ops & SelectionKey.OP_CONNECT) != 0 ? !c.isConnected() : pastFallbackDeadline())) {
            // A client under both (or auto) whose fabric refused or took too long. OP_CONNECT must mean that
            // finishConnect returns true or throws (Netty treats anything else as a broken selector), so TCP is
            // started here, and OP_CONNECT is reported when TCP has an outcome.
            return fallBackFromSelector(c);
        }
        return ops;
    }

    /**
     * On a selecting thread: moves a pending {@code both} connect whose fabric failed or took too long over to
     * TCP. Returns OP_CONNECT when TCP already has an outcome (connected at once, or failed: then the failure waits
     * in {@link #deferredConnectFailure} for finishConnect), else 0: the keys follow the channel to TCP, whose own
     * readiness reports OP_CONNECT. When an application thread holds the channel's locks it is left to that thread
     * ({@link #fabricDeadline} keeps the key looked at meanwhile).
     */
    private int fallBackFromSelector(Connection c) {
        if (!readLock.tryLock()) {
            return 0;
        }
        try {
            if (!writeLock.tryLock()) {
                return 0;
            }
            try {
                if (state != ST_PENDING || connection != c || !fallbackToTcp || !isOpen()) {
                    return 0;
                }
                IOException cause;
                try {
                    if (c.finishConnect()) {
                        // Connected after all: finishConnect completes it.
                        return SelectionKey.OP_CONNECT;
                    }
                    cause = handshakeTooSlow();
                } catch (IOException e) {
                    cause = e;
                }
                InetSocketAddress isa = remoteAddress();
                SocketChannel d;
                try {
                    d = dropFabricForTcp(isa, cause);
                } catch (IOException e) {
                    e.addSuppressed(cause);
                    deferredConnectFailure = e;
                    return SelectionKey.OP_CONNECT;
                }
                try {
                    if (!d.connect(isa)) {
                        return 0;
                    }
                } catch (IOException e) {
                    // The JDK closed its channel; this one closes when finishConnect reports the failure.
                    e.addSuppressed(cause);
                    deferredConnectFailure = e;
                    return SelectionKey.OP_CONNECT;
                }
                countConnected(false);
                return SelectionKey.OP_CONNECT;
            } finally {
                writeLock.unlock();
            }
        } finally {
            readLock.unlock();
        }
    }

    private static SocketTimeoutException handshakeTooSlow() {
        return new SocketTimeoutException("the fabric handshake took longer than "
                + TimeUnit.NANOSECONDS.toMillis(FallbackSetting.nanos()) + " ms (" + FallbackSetting.PROPERTY + ")");
    }

    private boolean pastFallbackDeadline() {
        long d = fallbackDeadline;
        return d != 0 && System.nanoTime() - d >= 0;
    }

    @Override
    public long fabricDeadline() {
        long d = fallbackDeadline;
        if (state != ST_PENDING || d == 0) {
            return 0;
        }
        Connection c = connection;
        if (c != null && (c.readyOps() & SelectionKey.OP_CONNECT) != 0) {
            // The fabric has an outcome but the fallback could not start yet (an application thread held the
            // channel's locks): due now, so the selector looks again.
            return nonZero(System.nanoTime());
        }
        return d;
    }

    @Override
    public void addFabricListener(ReadinessListener listener) {
        Connection c = connection;
        if (c != null) {
            c.addReadinessListener(listener);
        }
    }

    @Override
    public void removeFabricListener(ReadinessListener listener) {
        Connection c = connection;
        if (c != null) {
            c.removeReadinessListener(listener);
        }
    }

    @Override
    public void attachKey(RdmaSelectionKey key) {
        synchronized (stateLock) {
            keys.add(key);
        }
    }

    @Override
    public void detachKey(RdmaSelectionKey key) {
        synchronized (stateLock) {
            keys.remove(key);
        }
        if (!isOpen() && !isRegistered()) {
            closeDeferredConnection();
        }
    }

    /**
     * As the JDK's non-blocking channel closes while a selector holds it: it shuts its output (the peer reads end
     * of stream) and leaves the rest of the close to the deregistration of its last key, at a select of that
     * selector or its close; until then the connection takes the peer's bytes as a socket that is not closed yet
     * does (its writes go on without error), and then bytes left unread reset it, which its peer meets after the
     * FIN, as Linux reports a reset then: "Broken pipe" on a write, reads ending, not "Connection reset".
     */
    private void deferClose(Connection c) {
        try {
            c.shutdownOutput();
        } catch (IOException | RuntimeException e) {
            // Already reset or shut: the close is all there is left to do.
        }
        synchronized (stateLock) {
            deferredClose = c;
        }
        if (!isRegistered()) {
            // Its last key went meanwhile: whoever takes the connection first closes it.
            closeDeferredConnection();
        }
    }

    private void closeDeferredConnection() {
        Connection c;
        synchronized (stateLock) {
            c = deferredClose;
            deferredClose = null;
        }
        if (c != null) {
            c.close();
        }
    }

    /** Tells every key that the channel was routed: they follow it at their selector's next select. */
    private void publishRoute() {
        RdmaSelectionKey[] ks;
        synchronized (stateLock) {
            ks = keys.toArray(new RdmaSelectionKey[0]);
        }
        for (RdmaSelectionKey k : ks) {
            k.rdmaSelector().enqueue(k);
        }
    }

    /**
     * Caller holds the read and write locks. Routes to the JDK's TCP (once): opens the delegate, replays options,
     * mirrors the blocking mode ({@link #blockingMode}: a configureBlocking waits for these locks, so the mode
     * cannot change meanwhile, and one that comes after finds the delegate).
     */
    private SocketChannel routeToDelegate() throws IOException {
        assert readLock.isHeldByCurrentThread() && writeLock.isHeldByCurrentThread();
        SocketChannel d;
        synchronized (stateLock) {
            ensureOpen();
            if (route == ROUTE_FABRIC) {
                throw new IllegalStateException("already routed to a fabric");
            }
            d = delegate;
            if (d != null) {
                return d;
            }
            Closeable held = boundHolder;
            d = held instanceof SocketChannel ? (SocketChannel) held : openJdkChannel();
            try {
                replayOptions(d);
                d.configureBlocking(blockingMode);
                if (held != null && held != d) {
                    // A java.net socket's port, let go for a channel of the same address: TCP after the fabric.
                    held.close();
                    d.bind(boundAddress);
                }
            } catch (IOException | RuntimeException e) {
                d.close();
                throw e;
            }
            delegate = d;
            boundHolder = null;
            route = ROUTE_DELEGATE;
        }
        publishRoute();
        return d;
    }

    /** Caller holds the state lock. Sets the options set so far on a JDK channel of this one's. */
    private void replayOptions(SocketChannel d) throws IOException {
        for (Map.Entry<SocketOption<?>, Object> e : options.entrySet()) {
            setDelegateOption(d, e.getKey(), e.getValue());
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> void setDelegateOption(SocketChannel d, SocketOption<T> name, Object value) throws IOException {
        d.setOption(name, (T) value);
    }

    /** A JDK channel of this one's family, for TCP or to hold a port. */
    private SocketChannel openJdkChannel() throws IOException {
        return family == null ? rdma.jdk().openSocketChannel() : rdma.jdk().openSocketChannel(family);
    }

    // ------------------------------------------------------------------ checks

    private void ensureOpen() throws ClosedChannelException {
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
    }

    /**
     * As the JDK's connect: a blocking connect begins its I/O operation before it finds the channel closed, and the
     * end of that operation reports a closed channel as an asynchronous close (JDK 17); JDK 25's checks first
     * ({@code ClosedChannelException}). As the running JDK's: {@link JdkSocketBehaviour}.
     */
    private void ensureOpenToConnect() throws ClosedChannelException {
        if (!isOpen()) {
            throw isBlocking() && JdkSocketBehaviour.closedBlockingConnectIsAsynchronousClose()
                    ? new AsynchronousCloseException() : new ClosedChannelException();
        }
    }

    private static final InetAddress LOOPBACK4 = unnamed(new byte[] {127, 0, 0, 1});
    private static final InetAddress LOOPBACK6 = unnamed(new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});

    private static InetAddress unnamed(byte[] address) {
        try {
            return InetAddress.getByAddress(address);
        } catch (java.net.UnknownHostException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private InetSocketAddress checkRemote(SocketAddress sa) {
        Objects.requireNonNull(sa); // as the JDK's: no message
        if (!(sa instanceof InetSocketAddress)) {
            throw new UnsupportedAddressTypeException();
        }
        InetSocketAddress isa = (InetSocketAddress) sa;
        if (isa.isUnresolved()) {
            throw new UnresolvedAddressException();
        }
        if (family == StandardProtocolFamily.INET && !(isa.getAddress() instanceof Inet4Address)) {
            throw new UnsupportedAddressTypeException();
        }
        if (isa.getAddress().isAnyLocalAddress()) {
            // As the JDK's channel: connecting to the wildcard address means the loopback address of its family
            // (::1 for ::), named without a host name.
            return new InetSocketAddress(isa.getAddress() instanceof java.net.Inet6Address ? LOOPBACK6 : LOOPBACK4,
                isa.getPort());
        }
        return isa;
    }

    /** The connection to read from or write to, or the JDK's exception for this state. */
    private Connection ensureConnected() throws ClosedChannelException {
        int s = state;
        if (s == ST_CLOSED || !isOpen()) {
            throw new ClosedChannelException();
        }
        if (s != ST_CONNECTED) {
            throw new NotYetConnectedException();
        }
        return connection;
    }

    /** When the JDK channel underneath was closed by an interrupt (or a failed connect), this one closes too. */
    private <E extends IOException> E afterDelegateFailure(SocketChannel d, E e) {
        if (!d.isOpen()) {
            closeQuietly();
        }
        return e;
    }

    private void closeQuietly() {
        try {
            close();
        } catch (IOException ignore) {
            // Closing after a failure: the failure is what the caller reports.
        }
    }

    private void countConnected(boolean fabric) {
        boolean first;
        synchronized (stateLock) {
            first = !counted;
            counted = true;
        }
        if (first) {
            RunStats.get().connectionOpened(fabric);
        }
    }

    // ------------------------------------------------------------------ bind, connect

    @Override
    public SocketChannel bind(SocketAddress local) throws IOException {
        readLock.lock();
        try {
            writeLock.lock();
            try {
                SocketChannel d;
                synchronized (stateLock) {
                    ensureOpen();
                    if (state == ST_PENDING) {
                        throw new ConnectionPendingException();
                    }
                    if (route == ROUTE_FABRIC || boundHolder != null) {
                        throw new AlreadyBoundException();
                    }
                    d = delegate;
                }
                if (d != null) {
                    try {
                        d.bind(local);
                    } catch (ClosedByInterruptException e) {
                        throw afterDelegateFailure(d, e);
                    }
                    return this;
                }
                bindHolder(local);
                return this;
            } finally {
                writeLock.unlock();
            }
        } finally {
            readLock.unlock();
        }
    }

    /**
     * Caller holds the read and write locks. Binds a JDK channel as the JDK's own bind does (its checks, errors and
     * port) and keeps it until connect routes: routing is decided at connect for a bound channel too.
     */
    private void bindHolder(SocketAddress local) throws IOException {
        SocketChannel h = openJdkChannel();
        try {
            synchronized (stateLock) {
                replayOptions(h);
            }
            h.bind(local);
        } catch (IOException | RuntimeException e) {
            h.close();
            throw e;
        }
        holdPort(h, (InetSocketAddress) h.getLocalAddress());
    }

    /**
     * Keeps {@code holder}, bound to {@code local} before this unrouted channel connects, as the owner of its port:
     * a fabric connection connects from {@code local} and the holder closes with this channel; TCP binds there.
     */
    void holdPort(Closeable holder, InetSocketAddress local) throws IOException {
        synchronized (stateLock) {
            if (!isOpen() || boundHolder != null || delegate != null || connection != null) {
                holder.close();
                if (!isOpen()) {
                    throw new ClosedChannelException();
                }
                throw new AlreadyBoundException();
            }
            boundHolder = holder;
            boundAddress = local;
        }
    }

    @Override
    public boolean connect(SocketAddress remote) throws IOException {
        InetSocketAddress isa = checkRemote(remote);
        readLock.lock();
        try {
            writeLock.lock();
            try {
                SocketChannel d;
                synchronized (stateLock) {
                    ensureOpenToConnect();
                    if (state == ST_CONNECTED) {
                        throw new AlreadyConnectedException();
                    }
                    if (state == ST_PENDING) {
                        throw new ConnectionPendingException();
                    }
                    d = delegate;
                }
                long nanos = isBlocking() ? Long.MAX_VALUE : 0;
                if (d == null) {
                    Route r = RouteStats.connect(isa, rdma.config().router().forConnect(isa));
                    if (r.usesFabric()) {
                        return beginFabricConnect(isa, tcpAfterFabric(r), nanos);
                    }
                    d = routeToDelegate();
                }
                return connectDelegate(d, isa, nanos);
            } finally {
                writeLock.unlock();
            }
        } finally {
            readLock.unlock();
        }
    }

    /**
     * Caller holds the read and write locks. Connects {@code d} (0: non-blocking; {@code Long.MAX_VALUE}: blocking
     * without limit; otherwise blocking with that timeout, as the socket adaptor's connect).
     */
    private boolean connectDelegate(SocketChannel d, InetSocketAddress isa, long nanos) throws IOException {
        boolean done;
        try {
            if (nanos != 0 && nanos != Long.MAX_VALUE) {
                d.socket().connect(isa, (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(nanos))));
                done = true;
            } else {
                done = d.connect(isa);
            }
        } catch (IOException e) {
            throw afterDelegateFailure(d, e);
        }
        if (done) {
            countConnected(false);
        }
        return done;
    }

    /**
     * Caller holds the read and write locks. As the kernel's connect of the JDK's (IPv6) socket: bound to an IPv6
     * address, it cannot reach an IPv4 one (a mapped address: "Network is unreachable"); bound to an IPv4 address
     * (a mapped one), it cannot connect to an IPv6 one ("Address family not supported by protocol"). A wildcard
     * binding connects to either. As the JDK's, the failed connect closes the channel.
     */
    private void checkBoundFamily(InetSocketAddress isa) throws SocketException {
        InetAddress bound;
        synchronized (stateLock) {
            bound = boundHolder == null ? null : boundAddress.getAddress();
        }
        if (bound == null || bound.isAnyLocalAddress()) {
            return;
        }
        boolean v6 = bound instanceof Inet6Address;
        if (v6 == isa.getAddress() instanceof Inet6Address) {
            return;
        }
        closeQuietly();
        throw new SocketException(v6 ? "Network is unreachable" : "Address family not supported by protocol");
    }

    /**
     * Whether TCP is tried when the fabric cannot connect: under {@code both}, and under {@code auto}, where a
     * fabric handshake refused by a peer that does not serve the address over a fabric is the answer to "does it?".
     */
    private static boolean tcpAfterFabric(Route r) {
        return r.action() == Action.BOTH || r.action() == Action.AUTO;
    }

    /** Caller holds the read and write locks; {@code nanos} as for {@link #connectDelegate}. */
    private boolean beginFabricConnect(InetSocketAddress isa, boolean both, long nanos) throws IOException {
        if (nanos != 0 && !InterruptPolicy.ignoresInterrupts(javaNetSocket)) {
            // As the JDK's: a blocking connect begun with the interrupt status set closes the channel before any
            // handshake starts, so the listener never sees it.
            ensureNotInterrupted();
        }
        checkBoundFamily(isa);
        Connection c;
        try {
            Engine engine = rdma.config().engines().engineFor(isa, false);
            c = engine.connect(isa, connectionOptions());
        } catch (IOException e) {
            if (both) {
                return fallBackToTcp(isa, e, nanos);
            }
            closeQuietly();
            throw e;
        } catch (RuntimeException e) {
            closeQuietly();
            throw e;
        }
        synchronized (stateLock) {
            if (!isOpen()) {
                c.close();
                throw new ClosedChannelException();
            }
            connection = c;
            c.setLingerZero(Integer.valueOf(0).equals(options.get(StandardSocketOptions.SO_LINGER)));
            c.setOobInline(oobInline(options));
            remoteAddress = isa;
            state = ST_PENDING;
            route = ROUTE_FABRIC;
            fallbackToTcp = both;
            // rdmanio.fallbackMillis: how long a client under a both rule waits for the fabric's handshake before it
            // tries TCP (a refused or failed handshake falls back at once). In non-blocking mode OP_CONNECT becomes
            // ready at that time, so that finishConnect makes the move.
            fallbackDeadline = both ? nonZero(System.nanoTime() + FallbackSetting.nanos()) : 0;
        }
        publishRoute();
        if (nanos == 0) {
            // As TCP's on Linux, a non-blocking connect never completes inside connect(): OP_CONNECT and
            // finishConnect report the outcome. Programs register OP_CONNECT without looking at connect's result,
            // and finishConnect drives the handshake, so a connect that completed here would never be reported.
            return false;
        }
        return awaitFabricConnect(c, nanos);
    }

    /**
     * Caller holds the read and write locks. Waits up to {@code nanos} (0: just try) for the handshake. Under a
     * {@code both} rule a failed handshake, or one that takes longer than {@code rdmanio.fallbackMillis},
     * hands the connect over to TCP with the time that is left.
     */
    private boolean awaitFabricConnect(Connection c, long nanos) throws IOException {
        long deadline = nanos == Long.MAX_VALUE ? 0 : System.nanoTime() + nanos;
        for (;;) {
            boolean done;
            try {
                done = c.finishConnect();
            } catch (IOException e) {
                if (fallbackToTcp) {
                    return fallBackToTcp(remoteAddress(), e, remainingNanos(nanos, deadline));
                }
                // As the JDK: a failed connect closes the channel.
                closeQuietly();
                throw refusedAsTheJdk(e);
            } catch (RuntimeException e) {
                closeQuietly();
                throw e;
            }
            if (done) {
                synchronized (stateLock) {
                    if (state == ST_PENDING) {
                        state = ST_CONNECTED;
                    }
                    established = true;
                    fallbackToTcp = false;
                    fallbackDeadline = 0;
                }
                countConnected(true);
                return true;
            }
            long fabricLeft = fallbackToTcp ? fallbackDeadline - System.nanoTime() : Long.MAX_VALUE;
            if (fabricLeft <= 0) {
                return fallBackToTcp(remoteAddress(), handshakeTooSlow(), remainingNanos(nanos, deadline));
            }
            if (nanos == 0) {
                return false;
            }
            long wait = deadline == 0 ? Long.MAX_VALUE : deadline - System.nanoTime();
            if (fallbackToTcp) {
                wait = Math.min(wait, fabricLeft);
            } else if (wait <= 0) {
                // The server never answered (a full backlog holds the request): given up, as a TCP socket closed
                // in SYN_SENT, rather than completed behind the closed channel as a closed pending connect is.
                c.abort();
                closeQuietly();
                throw new SocketTimeoutException("Connect timed out");
            }
            boolean ready = false;
            boolean plain = InterruptPolicy.ignoresInterrupts(javaNetSocket);
            boolean interrupted = plain && Thread.interrupted();
            if (!plain) {
                begin();
            }
            try {
                ready = c.await(Readiness.CONNECT, wait) != 0;
            } finally {
                endBlocking(plain, interrupted || plain && Thread.interrupted(), ready);
            }
            if (!plain) {
                ensureNotInterrupted();
            } else if (!isOpen()) {
                throw new AsynchronousCloseException();
            }
        }
    }

    /**
     * A refused fabric connect as the JDK reports a refused TCP connect: the message is the kernel's words alone
     * ("Connection refused"), for programs that look at it; the fabric's account (no listener there, on which
     * fabric, a TCP listener on the wildcard address instead) is its cause, printed with its stack trace.
     */
    static IOException refusedAsTheJdk(IOException e) {
        String m = e.getMessage();
        if (!(e instanceof java.net.ConnectException) || m == null || !m.startsWith(REFUSED) || m.equals(REFUSED)) {
            return e;
        }
        java.net.ConnectException plain = new java.net.ConnectException(REFUSED);
        plain.initCause(e);
        return plain;
    }

    private static final String REFUSED = "Connection refused";

    /**
     * The exception of a blocking accept or finishConnect that finds its channel already closed, as the JDK's:
     * JDK 17 looks inside begin()/end(), whose end says {@link AsynchronousCloseException}; later JDKs look first
     * ({@link ClosedChannelException}), except the socket adaptor's accept with a timeout ({@code timedAccept}).
     */
    static ClosedChannelException closedFound(boolean blocking, boolean timedAccept) {
        return blocking && (timedAccept || Runtime.version().feature() <= 17)
            ? new AsynchronousCloseException() : new ClosedChannelException();
    }

    /**
     * Ends a blocking wait: a channel's ({@code end()}, which throws for a close or an interrupt), or a java.net
     * socket's on a platform thread ({@code plain}), which only sets back the interrupt status it cleared to wait.
     */
    private void endBlocking(boolean plain, boolean interrupted, boolean completed) throws AsynchronousCloseException {
        if (!plain) {
            end(completed);
        } else if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Marks this channel as the body of a java.net {@code Socket} ({@link RoutingSocketImpl}): its blocking calls
     * treat interrupts as java.net's socket does ({@link InterruptPolicy}).
     */
    void actAsJavaNetSocket() {
        javaNetSocket = true;
    }

    /** A deadline in {@link System#nanoTime()} terms, never 0 (which means "none"). */
    private static long nonZero(long nanoTime) {
        return nanoTime == 0 ? 1 : nanoTime;
    }

    /** What is left of a connect timeout for TCP (at least a little: TCP then reports the timeout itself). */
    private static long remainingNanos(long nanos, long deadline) {
        if (nanos == 0 || nanos == Long.MAX_VALUE) {
            return nanos;
        }
        return Math.max(1, deadline - System.nanoTime());
    }

    private InetSocketAddress remoteAddress() {
        synchronized (stateLock) {
            return remoteAddress;
        }
    }

    /**
     * Caller holds the read and write locks. A client under a {@code both} rule whose fabric could not connect:
     * the fabric connection is dropped and the connect starts again on TCP; the keys follow the channel there.
     * If TCP fails too, its exception carries the fabric's as suppressed, so both causes are named.
     */
    private boolean fallBackToTcp(InetSocketAddress isa, IOException fabricFailure, long nanos) throws IOException {
        SocketChannel d;
        try {
            d = dropFabricForTcp(isa, fabricFailure);
        } catch (IOException e) {
            e.addSuppressed(fabricFailure);
            throw e;
        }
        try {
            return connectDelegate(d, isa, nanos);
        } catch (IOException e) {
            e.addSuppressed(fabricFailure);
            throw e;
        }
    }

    /**
     * Caller holds the read and write locks. Drops the fabric connection of a pending {@code both} client and
     * routes the channel to a fresh JDK channel, not yet connected.
     */
    private SocketChannel dropFabricForTcp(InetSocketAddress isa, IOException fabricFailure) throws IOException {
        Connection c;
        synchronized (stateLock) {
            c = connection;
            connection = null;
            remoteAddress = null;
            state = ST_UNCONNECTED;
            route = ROUTE_NONE;
            fallbackToTcp = false;
            fallbackDeadline = 0;
            if (c != null) {
                for (RdmaSelectionKey k : keys) {
                    c.removeReadinessListener(k);
                }
            }
        }
        if (c != null) {
            c.abort();
        }
        // Logged there at info: a connection that was meant for the fabric and runs on TCP is what a user looks for.
        RouteStats.get().fallback(isa, fabricFailure);
        fallbackCause = fabricFailure;
        return routeToDelegate();
    }

    private ConnectionOptions connectionOptions() {
        synchronized (stateLock) {
            return new ConnectionOptions(intOption(StandardSocketOptions.SO_RCVBUF),
                intOption(StandardSocketOptions.SO_SNDBUF), boundHolder == null ? null : boundAddress);
        }
    }

    private int intOption(SocketOption<Integer> name) {
        Object v = options.get(name);
        return v == null ? 0 : Math.max(0, (Integer) v);
    }

    @Override
    public boolean finishConnect() throws IOException {
        IOException failed = deferredConnectFailure;
        if (failed != null) {
            deferredConnectFailure = null;
            // As the JDK: a failed connect closes the channel.
            closeQuietly();
            throw failed;
        }
        SocketChannel d = delegate;
        if (d != null) {
            boolean done;
            try {
                done = d.finishConnect();
            } catch (IOException e) {
                IOException fabricFailure = fallbackCause;
                if (fabricFailure != null) {
                    e.addSuppressed(fabricFailure);
                }
                throw afterDelegateFailure(d, e);
            }
            if (done) {
                countConnected(false);
            }
            return done;
        }
        readLock.lock();
        try {
            writeLock.lock();
            try {
                synchronized (stateLock) {
                    if (!isOpen()) {
                        throw closedFound(isBlocking(), false);
                    }
                    if (state == ST_CONNECTED) {
                        return true;
                    }
                    if (state != ST_PENDING) {
                        throw new NoConnectionPendingException();
                    }
                }
                return awaitFabricConnect(connection, isBlocking() ? Long.MAX_VALUE : 0);
            } finally {
                writeLock.unlock();
            }
        } finally {
            readLock.unlock();
        }
    }

    /** The socket adaptor's connect with a timeout; the channel must be in blocking mode. */
    void connect(SocketAddress remote, long timeoutNanos) throws IOException {
        InetSocketAddress isa = checkRemote(remote);
        if (!isBlocking()) {
            throw new IllegalBlockingModeException();
        }
        readLock.lock();
        try {
            writeLock.lock();
            try {
                SocketChannel d;
                synchronized (stateLock) {
                    ensureOpenToConnect();
                    if (state == ST_CONNECTED) {
                        throw new AlreadyConnectedException();
                    }
                    if (state == ST_PENDING) {
                        throw new ConnectionPendingException();
                    }
                    d = delegate;
                }
                if (d == null) {
                    Route r = RouteStats.connect(isa, rdma.config().router().forConnect(isa));
                    if (r.usesFabric()) {
                        beginFabricConnect(isa, tcpAfterFabric(r), timeoutNanos);
                        return;
                    }
                    d = routeToDelegate();
                }
                connectDelegate(d, isa, timeoutNanos);
            } finally {
                writeLock.unlock();
            }
        } finally {
            readLock.unlock();
        }
    }

    @Override
    public boolean isConnected() {
        SocketChannel d = delegate;
        return d != null ? d.isConnected() : state == ST_CONNECTED;
    }

    @Override
    public boolean isConnectionPending() {
        if (deferredConnectFailure != null) {
            return true;
        }
        SocketChannel d = delegate;
        return d != null ? d.isConnectionPending() : state == ST_PENDING;
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        ensureOpen();
        return localAddressKept();
    }

    /**
     * The local address as the JDK's socket adaptor reads it: kept after the channel is closed ({@code null} while
     * unbound), for {@code isBound}, {@code getLocalPort} and {@code getLocalSocketAddress}. While a connect is
     * under way it is {@code null}, as the JDK's channel learns its address only when the connect completes (a
     * channel bound explicitly reports its bound address until then).
     */
    InetSocketAddress localAddressKept() {
        SocketChannel d = delegate;
        if (d != null) {
            return (InetSocketAddress) d.socket().getLocalSocketAddress();
        }
        Connection c = connection;
        if (c != null && established) {
            return withoutHostName(c.localAddress());
        }
        // Pending, or a connect that failed: as the JDK's, whose channel learns its address only when the connect
        // completes, the address of an explicit bind or none (a refused channel is not bound).
        synchronized (stateLock) {
            return boundAddress;
        }
    }

    /** The remote address, kept after the channel is closed ({@code null} while unconnected). */
    InetSocketAddress remoteAddressKept() {
        SocketChannel d = delegate;
        if (d != null) {
            return (InetSocketAddress) d.socket().getRemoteSocketAddress();
        }
        return remoteAddress();
    }

    /**
     * {@code a} without the host name it may carry: as the JDK's channels, which read their local address from the
     * socket, a fabric channel's local address prints as {@code /127.0.0.1:8080}, not {@code localhost/127.0.0.1:8080}.
     */
    static InetSocketAddress withoutHostName(InetSocketAddress a) {
        if (a == null || a.isUnresolved() || a.getAddress().toString().startsWith("/")) {
            return a;
        }
        InetAddress ia = a.getAddress();
        try {
            InetAddress bare = ia instanceof java.net.Inet6Address && ((java.net.Inet6Address) ia).getScopeId() != 0
                ? java.net.Inet6Address.getByAddress(null, ia.getAddress(), ((java.net.Inet6Address) ia).getScopeId())
                : InetAddress.getByAddress(ia.getAddress());
            return new InetSocketAddress(bare, a.getPort());
        } catch (java.net.UnknownHostException e) {
            return a;
        }
    }

    @Override
    public SocketAddress getRemoteAddress() throws IOException {
        ensureOpen();
        return remoteAddressKept();
    }

    // ------------------------------------------------------------------ read, write

    @Override
    public int read(ByteBuffer dst) throws IOException {
        Objects.requireNonNull(dst); // as the JDK's: no message
        SocketChannel d = delegate;
        if (d != null) {
            int n;
            try {
                n = d.read(dst);
            } catch (IOException e) {
                throw afterDelegateFailure(d, e);
            }
            RunStats.get().bytes(false, n);
            return n;
        }
        readLock.lock();
        try {
            readOne[0] = dst;
            try {
                return (int) implRead(readOne, 0, 1, isBlocking() ? Long.MAX_VALUE : 0);
            } finally {
                readOne[0] = null;
            }
        } finally {
            readLock.unlock();
        }
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, dsts.length);
        SocketChannel d = delegate;
        if (d != null) {
            long n;
            try {
                n = d.read(dsts, offset, length);
            } catch (IOException e) {
                throw afterDelegateFailure(d, e);
            }
            RunStats.get().bytes(false, n);
            return n;
        }
        readLock.lock();
        try {
            return implRead(dsts, offset, iovSpan(dsts, offset, length), isBlocking() ? Long.MAX_VALUE : 0);
        } finally {
            readLock.unlock();
        }
    }

    /** The most buffers one scattering read or gathering write of the JDK's moves: Linux's IOV_MAX. */
    private static final int IOV_MAX = 1024;

    /**
     * How many of {@code length} buffers from {@code offset} one call moves: as the JDK's, which hands the kernel
     * at most {@link #IOV_MAX} buffers with room (or bytes) in them and leaves the rest for the next call; a null
     * buffer among them throws {@code NullPointerException} before anything moves.
     */
    static int iovSpan(ByteBuffer[] bufs, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            // As the JDK's: a null among the buffers fails the call before any byte moves.
            Objects.requireNonNull(bufs[i]);
        }
        if (length <= IOV_MAX) {
            return length;
        }
        int counted = 0;
        for (int i = 0; i < length; i++) {
            if (bufs[offset + i].hasRemaining() && ++counted == IOV_MAX) {
                return i + 1;
            }
        }
        return length;
    }

    /**
     * Fabric read: caller holds the read lock. Waits up to {@code nanos} (0: just try). A blocking read runs inside
     * {@code begin()/end()} from its first attempt, as the JDK's does: an interrupt (even one pending before the
     * call) closes the channel and ends it with {@link ClosedByInterruptException}, a close from another thread
     * with {@link AsynchronousCloseException}, and the interrupt status stays set.
     */
    private long implRead(ByteBuffer[] dsts, int offset, int length, long nanos) throws IOException {
        Connection c = ensureConnected();
        if (inputShutdown) {
            return -1;
        }
        ensureWritable(dsts, offset, length);
        if (!hasRemaining(dsts, offset, length)) {
            return 0;
        }
        if (nanos == 0) {
            long n = c.read(dsts, offset, length);
            if (n > 0) {
                RunStats.get().bytes(true, n);
            }
            return n;
        }
        long deadline = nanos == Long.MAX_VALUE ? 0 : System.nanoTime() + nanos;
        long n = 0;
        boolean plain = InterruptPolicy.ignoresInterrupts(javaNetSocket);
        boolean interrupted = false;
        if (!plain) {
            begin();
        }
        try {
            for (;;) {
                try {
                    n = c.read(dsts, offset, length);
                } catch (IOException e) {
                    if (!isOpen()) {
                        // Closed by an interrupt or another thread meanwhile: end() names that instead.
                        n = 0;
                        break;
                    }
                    throw e;
                }
                if (n != 0 || !isOpen()) {
                    break;
                }
                if (Thread.currentThread().isInterrupted()) {
                    if (!plain) {
                        break;
                    }
                    interrupted |= Thread.interrupted();
                }
                long wait = deadline == 0 ? Long.MAX_VALUE : deadline - System.nanoTime();
                if (wait <= 0) {
                    throw new SocketTimeoutException("Read timed out");
                }
                c.await(Readiness.READ, wait);
            }
        } finally {
            endBlocking(plain, interrupted, n > 0);
        }
        if (!plain) {
            ensureNotInterrupted();
        } else if (n <= 0 && !isOpen()) {
            // Closed by another thread while waiting (end() would have said so).
            throw new AsynchronousCloseException();
        }
        if (n > 0) {
            RunStats.get().bytes(true, n);
        } else if (n == 0) {
            // Left the loop only because the channel closed: end() has thrown unless the close raced with it.
            throw new AsynchronousCloseException();
        }
        return n;
    }

    /** The socket adaptor's read with SO_TIMEOUT; the channel must be in blocking mode. */
    int timedRead(ByteBuffer dst, long timeoutNanos) throws IOException {
        readLock.lock();
        try {
            if (!isBlocking()) {
                throw new IllegalBlockingModeException();
            }
            readOne[0] = dst;
            try {
                return (int) implRead(readOne, 0, 1, timeoutNanos == 0 ? Long.MAX_VALUE : timeoutNanos);
            } finally {
                readOne[0] = null;
            }
        } finally {
            readLock.unlock();
        }
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        Objects.requireNonNull(src); // as the JDK's: no message
        SocketChannel d = delegate;
        if (d != null) {
            int n;
            try {
                n = d.write(src);
            } catch (IOException e) {
                throw afterDelegateFailure(d, e);
            }
            RunStats.get().bytes(false, n);
            return n;
        }
        writeLock.lock();
        try {
            writeOne[0] = src;
            try {
                return (int) implWrite(writeOne, 0, 1);
            } finally {
                writeOne[0] = null;
            }
        } finally {
            writeLock.unlock();
        }
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, srcs.length);
        SocketChannel d = delegate;
        if (d != null) {
            long n;
            try {
                n = d.write(srcs, offset, length);
            } catch (IOException e) {
                throw afterDelegateFailure(d, e);
            }
            RunStats.get().bytes(false, n);
            return n;
        }
        writeLock.lock();
        try {
            return implWrite(srcs, offset, iovSpan(srcs, offset, length));
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Fabric write: caller holds the write lock. Blocking mode writes every byte, as the JDK does, inside
     * {@code begin()/end()} from its first attempt: an interrupt closes the channel and ends the write with
     * {@link ClosedByInterruptException}; a close from another thread ends it with the bytes it took, or with
     * {@link AsynchronousCloseException} when it took none; so does {@link #shutdownOutput} from
     * another thread (the JDK's SocketChannelImpl does the same), leaving the channel open.
     */
    private long implWrite(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return implWrite(srcs, offset, length, false);
    }

    /**
     * TCP's urgent data, as the JDK's channel sends it for its socket adaptor's {@code sendUrgentData}: the byte
     * after those written before it, blocking (or not) as a write. 1 when sent, 0 when a non-blocking channel had
     * no room. See {@link Connection#writeUrgent}.
     */
    int sendOutOfBandData(byte b) throws IOException {
        ByteBuffer[] one = {ByteBuffer.wrap(new byte[] {b})};
        writeLock.lock();
        try {
            SocketChannel d = delegate;
            if (d != null) {
                throw new IllegalStateException("routed to TCP: the JDK's socket sends urgent data");
            }
            return (int) implWrite(one, 0, 1, true);
        } finally {
            writeLock.unlock();
        }
    }

    private long implWrite(ByteBuffer[] srcs, int offset, int length, boolean urgent) throws IOException {
        Connection c = ensureConnected();
        if (outputShutdown) {
            // What the JDK's channel throws (in either mode) for a write after shutdownOutput.
            throw new AsynchronousCloseException();
        }
        if (!hasRemaining(srcs, offset, length)) {
            // As the JDK's: nothing to write is 0, with no effect on the connection (after the peer's FIN or reset
            // too: what the next real write or read reports stays for it).
            return 0;
        }
        if (!isBlocking()) {
            long n = urgent ? c.writeUrgent(srcs[offset]) : c.write(srcs, offset, length);
            if (n > 0) {
                RunStats.get().bytes(true, n);
            }
            return n;
        }
        long total = 0;
        boolean plain = InterruptPolicy.ignoresInterrupts(javaNetSocket);
        boolean interrupted = false;
        if (!plain) {
            begin();
        }
        c.blockingWrite(true);
        try {
            for (;;) {
                long n;
                try {
                    n = urgent ? c.writeUrgent(srcs[offset]) : c.writeDirect(srcs, offset, length);
                } catch (IOException e) {
                    if (!isOpen() || outputShutdown) {
                        // Closed or shut down by another thread (or an interrupt) meanwhile: reported below.
                        break;
                    }
                    throw e;
                }
                if (n > 0) {
                    total += n;
                    RunStats.get().bytes(true, n);
                }
                if (!hasRemaining(srcs, offset, length) || !isOpen() || outputShutdown) {
                    break;
                }
                if (Thread.currentThread().isInterrupted()) {
                    if (!plain) {
                        break;
                    }
                    interrupted |= Thread.interrupted();
                }
                if (n == 0) {
                    c.await(Readiness.WRITE, Long.MAX_VALUE);
                }
            }
            // As TCP's: a blocking write returns once what it took has left this process (the kernel keeps
            // sending a returned write's bytes after its writer has gone; staging dies with it). Until then it is
            // under way, and a writer killed here leaves its reader the bytes that left, then end of stream.
            while (total > 0 && isOpen() && !outputShutdown && !c.allPosted()) {
                if (Thread.currentThread().isInterrupted()) {
                    if (!plain) {
                        break;
                    }
                    interrupted |= Thread.interrupted();
                }
                c.await(Readiness.POSTED, Long.MAX_VALUE);
            }
        } finally {
            c.blockingWrite(false);
            endBlocking(plain, interrupted, total > 0);
        }
        if (!plain) {
            ensureNotInterrupted();
        }
        if (total == 0 && hasRemaining(srcs, offset, length)) {
            // Output shut down by another thread before this write took a byte (a close has thrown in end()).
            throw new AsynchronousCloseException();
        }
        return total;
    }

    /**
     * After a blocking operation's {@code end()}: an interrupt whose hook did not close this channel is handled as
     * the hook would have. The hook is the thread's one "blocked on" slot, which a fabric's own interruptible
     * channel used on this thread meanwhile (mapping a peer's region while a send is posted) takes over and
     * clears; the interrupt status, which the wait returns on, is what tells.
     */
    private void ensureNotInterrupted() throws ClosedByInterruptException {
        if (Thread.currentThread().isInterrupted() && isOpen()) {
            closeQuietly();
            throw new ClosedByInterruptException();
        }
    }

    /** As the JDK: reading into a read-only buffer is an argument error, whatever it has room for. */
    private static void ensureWritable(ByteBuffer[] dsts, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            if (dsts[i].isReadOnly()) {
                throw new IllegalArgumentException("Read-only buffer");
            }
        }
    }

    private static boolean hasRemaining(ByteBuffer[] bufs, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            if (bufs[i].hasRemaining()) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ shutdown, close, blocking

    /**
     * For the socket adaptor's input stream, as the JDK's channel answers it: the bytes a read returns now without
     * waiting (a fabric connection first drives progress once), 0 after {@link #shutdownInput}.
     *
     * @throws java.nio.channels.ClosedChannelException if closed
     */
    int available() throws IOException {
        Connection c;
        synchronized (stateLock) {
            c = ensureConnected();
            if (inputShutdown) {
                return 0;
            }
        }
        return c.available();
    }

    @Override
    public SocketChannel shutdownInput() throws IOException {
        SocketChannel d = delegate;
        if (d != null) {
            d.shutdownInput();
            return this;
        }
        Connection c;
        synchronized (stateLock) {
            c = ensureConnected();
            if (inputShutdown) {
                return this;
            }
            inputShutdown = true;
        }
        c.shutdownInput();
        return this;
    }

    @Override
    public SocketChannel shutdownOutput() throws IOException {
        SocketChannel d = delegate;
        if (d != null) {
            d.shutdownOutput();
            return this;
        }
        Connection c;
        synchronized (stateLock) {
            c = ensureConnected();
            if (outputShutdown) {
                return this;
            }
            outputShutdown = true;
        }
        c.shutdownOutput();
        return this;
    }

    boolean isInputShutdown() {
        return inputShutdown;
    }

    boolean isOutputShutdown() {
        return outputShutdown;
    }

    @Override
    protected void implCloseSelectableChannel() throws IOException {
        SocketChannel d;
        Closeable held;
        Connection c;
        int linger;
        boolean wasConnected;
        synchronized (stateLock) {
            wasConnected = state == ST_CONNECTED;
            state = ST_CLOSED;
            d = delegate;
            held = boundHolder;
            boundHolder = null;
            c = connection;
            Object l = options.get(StandardSocketOptions.SO_LINGER);
            linger = l == null ? -1 : (Integer) l;
        }
        if (c != null) {
            if (linger == 0) {
                c.abort();
            } else {
                if (wasConnected && !isBlocking() && isRegistered()) {
                    deferClose(c);
                    c = null;
                } else {
                    c.close();
                }
                // As the JDK's close under SO_LINGER: the kernel's close waits up to that many seconds for the
                // bytes written to be delivered, unless the channel is non-blocking and still on a selector.
                if (c != null && linger > 0 && (isBlocking() || !isRegistered())) {
                    c.awaitClosed(TimeUnit.SECONDS.toNanos(linger));
                }
            }
        }
        if (d != null) {
            d.close();
        }
        if (held != null) {
            held.close();
        }
    }

    /**
     * As the JDK's: waits for a read, write or connect under way in another thread (their locks), so a blocking
     * read that is waiting keeps its mode until it returns; routing to TCP, which holds both locks, cannot happen
     * meanwhile, and a delegate made before takes the mode here.
     */
    @Override
    protected void implConfigureBlocking(boolean block) throws IOException {
        readLock.lock();
        try {
            writeLock.lock();
            try {
                // As the JDK's: closed while this waited for a blocked read or write (an interrupt, say).
                synchronized (stateLock) {
                    ensureOpen();
                }
                blockingMode = block;
                SocketChannel d = delegate;
                if (d != null) {
                    if (block) {
                        dropCancelledInnerKeys();
                    }
                    d.configureBlocking(block);
                }
            } finally {
                writeLock.unlock();
            }
        } finally {
            readLock.unlock();
        }
    }

    /** A cancelled key leaves the channel free to block (JDK); drop its inner registration now to keep that. */
    private void dropCancelledInnerKeys() {
        synchronized (stateLock) {
            for (RdmaSelectionKey k : keys) {
                if (!k.isValid()) {
                    k.cancelInner();
                }
            }
        }
    }

    // ------------------------------------------------------------------ options, adaptor

    @Override
    public <T> SocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        Objects.requireNonNull(name); // as the JDK's: no message
        if (!supportedOptions().contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        if (value == null || !name.type().isInstance(value)) {
            throw new IllegalArgumentException("Invalid value '" + value + "'");
        }
        Object v = value;
        if (name == StandardSocketOptions.SO_LINGER) {
            int linger = (Integer) value;
            v = linger < 0 ? -1 : Math.min(linger, 65535);
        }
        SocketChannel d;
        Connection c;
        synchronized (stateLock) {
            // As the JDK's: a closed channel says so before its value is looked at.
            ensureOpen();
            d = delegate;
            c = connection;
            if (d == null) {
                // Checked and rounded as the kernel would (a leaf lock, taken under no other).
                Object reported = JdkDefaults.socket(rdma.jdk()).normalized(name, value);
                options.put(name, v);
                shown.put(name, reported);
            }
        }
        if (d == null) {
            if (c != null && name == StandardSocketOptions.SO_LINGER) {
                c.setLingerZero((Integer) v == 0);
            }
            if (c != null && isOobInline(name)) {
                c.setOobInline((Boolean) v);
            }
            return this;
        }
        d.setOption(name, value);
        return this;
    }

    /** The JDK's own SO_OOBINLINE is internal to java.base: known by its name. */
    private static boolean isOobInline(SocketOption<?> name) {
        return name.name().equals("SO_OOBINLINE") && name.type() == Boolean.class;
    }

    private static boolean oobInline(Map<SocketOption<?>, Object> options) {
        for (Map.Entry<SocketOption<?>, Object> e : options.entrySet()) {
            if (isOobInline(e.getKey())) {
                return Boolean.TRUE.equals(e.getValue());
            }
        }
        return false;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        Objects.requireNonNull(name); // as the JDK's: no message
        if (!supportedOptions().contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        SocketChannel d;
        synchronized (stateLock) {
            ensureOpen();
            d = delegate;
            if (d == null) {
                Object v = shown.get(name);
                Connection c = connection;
                if (v == null && name == StandardSocketOptions.SO_SNDBUF && c != null && c.sendBufferSize() > 0) {
                    // Connected: the send staging, as a connected TCP socket reads the buffer its kernel grew
                    // (Netty sizes its gathering writes from it).
                    v = c.sendBufferSize();
                }
                if (v == null) {
                    v = JdkDefaults.socket(rdma.jdk()).defaultValue(name);
                }
                return name.type().cast(v);
            }
        }
        return d.getOption(name);
    }

    /** Options set so far, which an accepting server's fabric connections inherit; a copy. */
    Map<SocketOption<?>, Object> optionsSnapshot() {
        synchronized (stateLock) {
            return new HashMap<>(options);
        }
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return JdkDefaults.socket(rdma.jdk()).options;
    }

    @Override
    public Socket socket() {
        synchronized (stateLock) {
            if (socket == null) {
                try {
                    socket = new RdmaSocketAdaptor(this);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }
            return socket;
        }
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(getClass().getSimpleName()).append('[');
        if (!isOpen()) {
            sb.append("closed");
        } else {
            SocketChannel d = delegate;
            if (d != null) {
                sb.append("tcp ").append(d);
            } else if (connection != null) {
                Connection c = connection;
                // The addresses as getLocalAddress and getRemoteAddress give them (and as the JDK's channel prints).
                sb.append(c.engine().fabricName()).append(state == ST_PENDING ? " connection-pending" : " connected")
                        .append(" local=").append(withoutHostName(c.localAddress()))
                        .append(" remote=").append(remoteAddress());
            } else {
                sb.append("unconnected");
            }
        }
        return sb.append(']').toString();
    }
}
