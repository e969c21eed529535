package io.rdmanio.selector;

import io.rdmanio.core.Logs;
import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.Listener;
import io.rdmanio.core.engine.Readiness;
import io.rdmanio.core.engine.ReadinessListener;
import io.rdmanio.selector.config.Action;
import io.rdmanio.selector.config.Route;
import io.rdmanio.selector.config.RouteStats;
import java.io.IOException;
import java.net.BindException;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.net.ProtocolFamily;
import java.net.ServerSocket;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.channels.AlreadyBoundException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.NotYetBoundException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
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
 * A server socket channel routed at bind by the router's bind rules: to a JDK {@link ServerSocketChannel}, to
 * an engine {@link Listener} whose accepted connections become fabric {@link RdmaSocketChannel}s, or (rule
 * action {@code both}, or {@code auto} where a fabric can listen) to the two at once, on the same port.
 *
 * <p>Thread-safe as the JDK's channel: one acceptor at a time (accept lock), state under the state lock, never
 * block holding the state lock. Lock order: accept lock, blocking lock, state lock.
 */
final class RdmaServerSocketChannel extends ServerSocketChannel implements RoutedChannel {

    private static final Logger LOG = Logs.get(RdmaServerSocketChannel.class);

    private final RdmaSelectorProvider rdma;
    private final ReentrantLock acceptLock = new ReentrantLock();
    /** The blocking mode as {@link #implConfigureBlocking} last set it (under the accept lock). */
    private volatile boolean blockingMode = true;
    /**
     * The family the channel was opened with, or null for the JDK's default; its kernel sockets and the channels
     * it accepts are of it ({@code INET}: IPv4 addresses only, as the JDK's).
     */
    private final ProtocolFamily family;
    private final Object stateLock = new Object();

    // -- written under the state lock, read anywhere
    private volatile int route;
    /** The body of a java.net ServerSocket: interrupts as java.net's ({@link #actAsJavaNetSocket}). */
    private volatile boolean javaNetSocket;
    private volatile ServerSocketChannel delegate;
    private volatile Listener listener;
    /** On a fabric alone: the kernel's TCP socket bound (not listening) to the listener's port, held for its life. */
    private volatile SocketChannel portHold;
    /**
     * A fabric listener bound to the wildcard: the address as the JDK's channel reports it (its port holder's:
     * {@code [::]} on a dual-stack JDK, {@code 0.0.0.0} with {@code java.net.preferIPv4Stack}); else null.
     */
    private volatile InetSocketAddress wildcardAsJdk;

    // -- accept lock
    private int acceptTurn;

    // -- state lock
    private final Map<SocketOption<?>, Object> options = new HashMap<>();
    /** What getOption reports for the options set: as the kernel rounds them ({@link JdkDefaults#normalized}). */
    private final Map<SocketOption<?>, Object> shown = new HashMap<>();
    /** Opened on the first blocking accept of a server on both transports. */
    private Selector waitSelector;
    private final List<RdmaSelectionKey> keys = new ArrayList<>(2);
    private ServerSocket socket;

    RdmaServerSocketChannel(RdmaSelectorProvider provider, ProtocolFamily family) {
        super(provider);
        this.rdma = provider;
        this.family = family;
    }

    @Override
    public int route() {
        return route;
    }

    @Override
    public SelectableChannel delegate() {
        return delegate;
    }

    ServerSocketChannel delegateChannel() {
        return delegate;
    }

    @Override
    public int fabricReadyOps() {
        Listener l = listener;
        return l == null ? 0 : l.readyOps();
    }

    @Override
    public Engine fabricEngine() {
        Listener l = listener;
        return l == null ? null : l.engine();
    }

    @Override
    public void addFabricListener(ReadinessListener l) {
        Listener li = listener;
        if (li != null) {
            li.addReadinessListener(l);
        }
    }

    @Override
    public void removeFabricListener(ReadinessListener l) {
        Listener li = listener;
        if (li != null) {
            li.removeReadinessListener(l);
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
    }

    private void publishRoute() {
        RdmaSelectionKey[] ks;
        synchronized (stateLock) {
            ks = keys.toArray(new RdmaSelectionKey[0]);
        }
        for (RdmaSelectionKey k : ks) {
            k.rdmaSelector().enqueue(k);
        }
    }

    private void ensureOpen() throws ClosedChannelException {
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
    }

    @Override
    public ServerSocketChannel bind(SocketAddress local, int backlog) throws IOException {
        acceptLock.lock();
        try {
            synchronized (stateLock) {
                ensureOpen();
                if (route != ROUTE_NONE) {
                    throw new AlreadyBoundException();
                }
            }
            // As the JDK's: the address is looked at once the channel is known open and unbound.
            InetSocketAddress isa;
            if (local == null) {
                isa = new InetSocketAddress(0);
            } else {
                if (!(local instanceof InetSocketAddress)) {
                    throw new UnsupportedAddressTypeException();
                }
                isa = (InetSocketAddress) local;
                if (isa.isUnresolved()) {
                    throw new UnresolvedAddressException();
                }
                if (family == StandardProtocolFamily.INET && !(isa.getAddress() instanceof Inet4Address)) {
                    throw new UnsupportedAddressTypeException();
                }
            }
            Route r = RouteStats.bind(isa, rdma.config().router().forBind(isa));
            if (r.action() == Action.BOTH || r.action() == Action.AUTO) {
                bindBoth(isa, backlog, r.action() == Action.AUTO);
            } else if (r.usesFabric()) {
                bindFabric(isa, backlog);
            } else {
                bindDelegate(isa, backlog);
            }
            publishRoute();
            return this;
        } finally {
            acceptLock.unlock();
        }
    }

    private Listener listen(InetSocketAddress isa, int backlog) throws IOException {
        ConnectionOptions opts;
        synchronized (stateLock) {
            Object rcv = options.get(StandardSocketOptions.SO_RCVBUF);
            opts = new ConnectionOptions(rcv == null ? 0 : (Integer) rcv, 0);
        }
        Engine engine = rdma.config().engines().engineFor(isa, true);
        // As the JDK: a backlog below 1 means its default of 50.
        return engine.listen(isa, backlog < 1 ? 50 : backlog, opts);
    }

    /**
     * A listener on a fabric alone holds its address's TCP port in the kernel, as a TCP listener would: another
     * process's TCP bind of that port (or of the wildcard address with it) then fails with {@code BindException},
     * and {@code bind(port 0)} gets its port from the kernel. The holding socket is bound but not listening, so a
     * TCP client is refused, as before.
     */
    private void bindFabric(InetSocketAddress isa, int backlog) throws IOException {
        for (int attempt = 0; ; attempt++) {
            SocketChannel hold = holdPort(isa);
            Listener l;
            try {
                l = listen(new InetSocketAddress(isa.getAddress(),
                    ((InetSocketAddress) hold.getLocalAddress()).getPort()), backlog);
            } catch (BindException e) {
                hold.close();
                if (isa.getPort() != 0 || attempt == 15) {
                    throw e;
                }
                continue; // the fabric has that port taken (by a listener that holds none): another one
            } catch (IOException | RuntimeException e) {
                hold.close();
                throw e;
            }
            publish(ROUTE_FABRIC, l, null, hold);
            return;
        }
    }

    /**
     * Makes what a bind opened this channel's transports ({@code d} and {@code hold} may be null), or closes them
     * all when this channel was closed meanwhile.
     */
    private void publish(int r, Listener l, ServerSocketChannel d, SocketChannel hold) throws IOException {
        synchronized (stateLock) {
            if (isOpen()) {
                listener = l;
                delegate = d;
                portHold = hold;
                route = r;
                if (hold != null && d == null && l.localAddress().getAddress().isAnyLocalAddress()) {
                    InetSocketAddress h = (InetSocketAddress) hold.getLocalAddress();
                    wildcardAsJdk = new InetSocketAddress(h.getAddress(), l.localAddress().getPort());
                }
                return;
            }
        }
        l.close();
        if (d != null) {
            d.close();
        }
        if (hold != null) {
            hold.close();
        }
        throw new ClosedChannelException();
    }

    /**
     * Binds a kernel TCP socket to {@code isa} without listening. First without {@code SO_REUSEADDR}, so that no
     * later TCP bind can share the port; where that fails, as the JDK's listener binds (with it), so that a port
     * held only by connections in TIME_WAIT is still had, and a port another listener holds fails as it would.
     */
    private SocketChannel holdPort(InetSocketAddress isa) throws IOException {
        for (boolean reuse : new boolean[] {false, true}) {
            SocketChannel hold = (family == null ? rdma.jdk().openSocketChannel() : rdma.jdk().openSocketChannel(family));
            try {
                hold.setOption(StandardSocketOptions.SO_REUSEADDR, reuse);
                hold.bind(isa);
                return hold;
            } catch (BindException e) {
                hold.close();
                if (reuse) {
                    throw e;
                }
            } catch (IOException | RuntimeException e) {
                hold.close();
                throw e;
            }
        }
        throw new AssertionError();
    }

    private void bindDelegate(InetSocketAddress isa, int backlog) throws IOException {
        ServerSocketChannel d = (family == null ? rdma.jdk().openServerSocketChannel() : rdma.jdk().openServerSocketChannel(family));
        try {
            synchronized (stateLock) {
                for (Map.Entry<SocketOption<?>, Object> e : options.entrySet()) {
                    setDelegateOption(d, e.getKey(), e.getValue());
                }
            }
            d.bind(isa, backlog);
        } catch (IOException | RuntimeException e) {
            d.close();
            throw e;
        }
        adoptDelegate(d);
    }

    /**
     * Caller holds the accept lock. Makes the bound JDK channel {@code d} this channel's only transport, in this
     * channel's blocking mode ({@link #blockingMode}: a configureBlocking waits for the accept lock).
     */
    private void adoptDelegate(ServerSocketChannel d) throws IOException {
        assert acceptLock.isHeldByCurrentThread();
        synchronized (stateLock) {
            if (!isOpen()) {
                d.close();
                throw new ClosedChannelException();
            }
            d.configureBlocking(blockingMode);
            delegate = d;
            route = ROUTE_DELEGATE;
        }
    }

    /**
     * Listens on TCP and on the fabric at the same address and port (the TCP port first, as the kernel's port
     * space is the shared one). The JDK channel stays non-blocking: accept takes from whichever side has a
     * connection, and a blocking accept waits on both through a private selector.
     */
    private void bindBoth(InetSocketAddress isa, int backlog, boolean tcpWithoutFabric) throws IOException {
        ServerSocketChannel d = (family == null ? rdma.jdk().openServerSocketChannel() : rdma.jdk().openServerSocketChannel(family));
        Listener l;
        try {
            synchronized (stateLock) {
                for (Map.Entry<SocketOption<?>, Object> e : options.entrySet()) {
                    setDelegateOption(d, e.getKey(), e.getValue());
                }
            }
            d.bind(isa, backlog);
            d.configureBlocking(false);
            int port = ((InetSocketAddress) d.getLocalAddress()).getPort();
            try {
                l = listen(new InetSocketAddress(isa.getAddress(), port), backlog);
            } catch (IOException e) {
                if (!tcpWithoutFabric) {
                    throw e;
                }
                // An auto rule where no fabric can listen: the server is on TCP alone.
                LOG.debug("server on {} stays on TCP: {}", d.getLocalAddress(), e.toString());
                adoptDelegate(d);
                return;
            }
        } catch (IOException | RuntimeException e) {
            d.close();
            throw e;
        }
        publish(ROUTE_BOTH, l, d, null);
    }

    @SuppressWarnings("unchecked")
    private static <T> void setDelegateOption(ServerSocketChannel d, SocketOption<T> name, Object value) throws IOException {
        d.setOption(name, (T) value);
    }

    @Override
    public SocketChannel accept() throws IOException {
        return implAccept(isBlocking() ? Long.MAX_VALUE : 0);
    }

    /** The socket adaptor's accept with SO_TIMEOUT (0: none); the channel must be in blocking mode. */
    SocketChannel timedAccept(long timeoutNanos) throws IOException {
        if (!isBlocking()) {
            throw new IllegalBlockingModeException();
        }
        ServerSocketChannel d = delegate;
        if (d != null && route == ROUTE_DELEGATE) {
            // The JDK's adaptor keeps SO_TIMEOUT semantics; its socket wraps the accepted JDK channel.
            d.socket().setSoTimeout((int) Math.min(Integer.MAX_VALUE, java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(timeoutNanos)));
            SocketChannel accepted;
            try {
                accepted = d.socket().accept().getChannel();
            } catch (java.nio.channels.ClosedByInterruptException e) {
                close();
                throw e;
            }
            return new RdmaSocketChannel(rdma, family, accepted);
        }
        return implAccept(timeoutNanos == 0 ? Long.MAX_VALUE : timeoutNanos);
    }

    /**
     * Marks this channel as the body of a java.net {@code ServerSocket} ({@link RoutingSocketImpl}): a blocking
     * accept treats interrupts as java.net's does ({@link InterruptPolicy}).
     */
    void actAsJavaNetSocket() {
        javaNetSocket = true;
    }

    private SocketChannel implAccept(long nanos) throws IOException {
        ServerSocketChannel d = delegate;
        if (d != null && route == ROUTE_DELEGATE) {
            SocketChannel accepted;
            try {
                accepted = d.accept();
            } catch (IOException e) {
                if (!d.isOpen()) {
                    close();
                }
                throw e;
            }
            return accepted == null ? null : new RdmaSocketChannel(rdma, family, accepted);
        }
        acceptLock.lock();
        try {
            if (!isOpen()) {
                throw RdmaSocketChannel.closedFound(nanos != 0, nanos != 0 && nanos != Long.MAX_VALUE);
            }
            Listener l = listener;
            if (l == null) {
                throw new NotYetBoundException();
            }
            if (route == ROUTE_BOTH) {
                return acceptEither(l, d, nanos);
            }
            if (nanos == 0) {
                Connection c = l.accept();
                return c == null ? null : new RdmaSocketChannel(rdma, family, c, inheritedOptions(), inheritedShown());
            }
            // As the JDK: a blocking accept is inside begin()/end() from its first attempt, so an interrupt
            // pending before the call closes the channel too.
            long deadline = nanos == Long.MAX_VALUE ? 0 : System.nanoTime() + nanos;
            Connection c = null;
            // A java.net ServerSocket's accept on a platform thread goes on when interrupted (InterruptPolicy).
            boolean plain = InterruptPolicy.ignoresInterrupts(javaNetSocket);
            boolean interrupted = false;
            if (!plain) {
                begin();
            }
            try {
                while (isOpen()) {
                    try {
                        c = l.accept();
                    } catch (IOException e) {
                        if (!isOpen()) {
                            break;
                        }
                        throw e;
                    }
                    if (c != null) {
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
                        throw new SocketTimeoutException("Accept timed out");
                    }
                    l.await(Readiness.ACCEPT, wait);
                }
            } finally {
                if (plain) {
                    if (interrupted) {
                        Thread.currentThread().interrupt();
                    }
                } else {
                    try {
                        end(c != null);
                    } catch (IOException e) {
                        // Interrupted or closed just after a connection was taken: nobody will own it.
                        if (c != null) {
                            c.close();
                        }
                        throw e;
                    }
                }
            }
            if (!plain && Thread.currentThread().isInterrupted() && isOpen()) {
                // The interrupt hook was taken over by a fabric channel used on this thread meanwhile (see
                // RdmaSocketChannel#ensureNotInterrupted): handled here as the hook would have.
                if (c != null) {
                    c.close();
                }
                close();
                throw new ClosedByInterruptException();
            }
            if (c == null) {
                throw new AsynchronousCloseException();
            }
            return new RdmaSocketChannel(rdma, family, c, inheritedOptions(), inheritedShown());
        } finally {
            acceptLock.unlock();
        }
    }

    /** Accept lock held. A connection from either transport, alternating which is asked first. */
    private SocketChannel acceptEither(Listener l, ServerSocketChannel d, long nanos) throws IOException {
        long deadline = nanos == Long.MAX_VALUE ? 0 : System.nanoTime() + nanos;
        for (;;) {
            boolean tcpFirst = (acceptTurn++ & 1) == 0;
            for (int i = 0; i < 2; i++) {
                if (tcpFirst == (i == 0)) {
                    SocketChannel a;
                    try {
                        a = d.accept();
                    } catch (ClosedChannelException e) {
                        ensureOpen();
                        throw e;
                    }
                    if (a != null) {
                        return new RdmaSocketChannel(rdma, family, a);
                    }
                } else {
                    Connection c = l.accept();
                    if (c != null) {
                        return new RdmaSocketChannel(rdma, family, c, inheritedOptions(), inheritedShown());
                    }
                }
            }
            if (nanos == 0) {
                return null;
            }
            long wait = deadline == 0 ? Long.MAX_VALUE : deadline - System.nanoTime();
            if (wait <= 0) {
                throw new SocketTimeoutException("Accept timed out");
            }
            awaitEither(wait);
        }
    }

    /**
     * Waits for a connection on either transport through a private selector. Not inside begin()/end(): the
     * inner JDK selector installs its own interrupt hook for the wait, so an interrupt is noticed afterwards.
     */
    private void awaitEither(long nanos) throws IOException {
        Selector w;
        synchronized (stateLock) {
            ensureOpen();
            w = waitSelector;
            if (w == null) {
                RdmaSelector rs = new RdmaSelector(rdma);
                rs.registerInternal(this, SelectionKey.OP_ACCEPT);
                waitSelector = w = rs;
            }
        }
        // A java.net ServerSocket's accept on a platform thread goes on when interrupted (InterruptPolicy): the
        // status is cleared for the wait and set again after it.
        boolean plain = InterruptPolicy.ignoresInterrupts(javaNetSocket);
        boolean interrupted = plain && Thread.interrupted();
        if (!Thread.currentThread().isInterrupted()) {
            try {
                w.select(nanos == Long.MAX_VALUE ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos + 999_999)));
                w.selectedKeys().clear();
            } catch (ClosedSelectorException e) {
                // Closed with this channel: reported below.
            }
        }
        if (plain) {
            if (interrupted | Thread.interrupted()) {
                Thread.currentThread().interrupt();
            }
            if (!isOpen()) {
                throw new AsynchronousCloseException();
            }
            return;
        }
        if (Thread.currentThread().isInterrupted()) {
            close();
            throw new ClosedByInterruptException();
        }
        if (!isOpen()) {
            throw new AsynchronousCloseException();
        }
    }

    /**
     * The options an accepted socket inherits from its listener on Linux (it is the listener's clone): besides the
     * receive buffer and address reuse, port reuse and the keep-alive times and count. The keep-alive options are
     * the JDK's extended ones (in {@code jdk.net}), known by their names.
     */
    private static boolean inherited(SocketOption<?> o) {
        return o == StandardSocketOptions.SO_REUSEPORT || switch (o.name()) {
            case "TCP_KEEPIDLE", "TCP_KEEPINTERVAL", "TCP_KEEPCOUNT" -> true;
            default -> false;
        };
    }

    /** The options set on this listener that an accepted channel inherits, as set. */
    private Map<SocketOption<?>, Object> inheritedOptions() {
        synchronized (stateLock) {
            Map<SocketOption<?>, Object> m = new HashMap<>();
            Object rcv = options.get(StandardSocketOptions.SO_RCVBUF);
            if (rcv != null) {
                m.put(StandardSocketOptions.SO_RCVBUF, rcv);
            }
            for (Map.Entry<SocketOption<?>, Object> e : options.entrySet()) {
                if (inherited(e.getKey())) {
                    m.put(e.getKey(), e.getValue());
                }
            }
            return m;
        }
    }

    /**
     * What an accepted channel reports for the options it inherits, as Linux's accepted socket does: the
     * listener's receive buffer and address reuse (on by default for the JDK's listeners, so on for what they
     * accept), and the {@link #inherited} options set on the listener.
     */
    private Map<SocketOption<?>, Object> inheritedShown() {
        synchronized (stateLock) {
            Map<SocketOption<?>, Object> m = new HashMap<>();
            for (SocketOption<?> o : List.of(StandardSocketOptions.SO_RCVBUF, StandardSocketOptions.SO_REUSEADDR)) {
                Object v = shown.get(o);
                if (v == null) {
                    v = JdkDefaults.serverSocket(rdma.jdk()).defaultValue(o);
                }
                if (v != null && (o != StandardSocketOptions.SO_RCVBUF || shown.containsKey(o))) {
                    m.put(o, v);
                }
            }
            for (Map.Entry<SocketOption<?>, Object> e : shown.entrySet()) {
                if (inherited(e.getKey())) {
                    m.put(e.getKey(), e.getValue());
                }
            }
            return m;
        }
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        ensureOpen();
        return channelAddressKept();
    }

    /**
     * The local address as the JDK's channel and its adaptor report it, kept after close: a wildcard as the JDK's
     * channel names it ({@code [::]} where the JDK's sockets are dual-stack).
     */
    InetSocketAddress channelAddressKept() {
        InetSocketAddress w = wildcardAsJdk;
        return w != null ? w : localAddressKept();
    }

    /**
     * The local address as bound, kept after close ({@code null} while unbound): what a java.net
     * {@code ServerSocket} reports ({@code 0.0.0.0} for a wildcard, as the JDK's).
     */
    InetSocketAddress localAddressKept() {
        ServerSocketChannel d = delegate;
        if (d != null) {
            return (InetSocketAddress) d.socket().getLocalSocketAddress();
        }
        Listener l = listener;
        return l == null ? null : RdmaSocketChannel.withoutHostName(l.localAddress());
    }

    @Override
    protected void implCloseSelectableChannel() throws IOException {
        ServerSocketChannel d;
        Listener l;
        Selector w;
        SocketChannel hold;
        synchronized (stateLock) {
            d = delegate;
            l = listener;
            w = waitSelector;
            hold = portHold;
        }
        if (l != null) {
            l.close();
        }
        if (hold != null) {
            hold.close();
        }
        if (d != null) {
            d.close();
        }
        if (w != null) {
            // Wakes a thread waiting in accept, then waits for it to leave the selector.
            w.close();
        }
    }

    /**
     * As the JDK's: waits for an accept under way in another thread (the accept lock), so a blocking accept that
     * is waiting keeps its mode until it returns.
     */
    @Override
    protected void implConfigureBlocking(boolean block) throws IOException {
        acceptLock.lock();
        try {
            // As the JDK's: closed while this waited for a blocked accept.
            if (!isOpen()) {
                throw new ClosedChannelException();
            }
            blockingMode = block;
            ServerSocketChannel d = delegate;
            // On both transports the JDK channel stays non-blocking: accept waits on both itself.
            if (d != null && route == ROUTE_DELEGATE) {
                if (block) {
                    synchronized (stateLock) {
                        for (RdmaSelectionKey k : keys) {
                            if (!k.isValid()) {
                                k.cancelInner();
                            }
                        }
                    }
                }
                d.configureBlocking(block);
            }
        } finally {
            acceptLock.unlock();
        }
    }

    @Override
    public <T> ServerSocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        Objects.requireNonNull(name); // as the JDK's: no message
        if (!supportedOptions().contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        if (value == null || !name.type().isInstance(value)) {
            throw new IllegalArgumentException("Invalid value '" + value + "'");
        }
        ServerSocketChannel d;
        synchronized (stateLock) {
            // As the JDK's: a closed channel says so before its value is looked at.
            ensureOpen();
            d = delegate;
            if (d == null) {
                // Checked and rounded as the kernel would (a leaf lock, taken under no other).
                Object reported = JdkDefaults.serverSocket(rdma.jdk()).normalized(name, value);
                options.put(name, value);
                shown.put(name, reported);
                return this;
            }
        }
        d.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        Objects.requireNonNull(name); // as the JDK's: no message
        if (!supportedOptions().contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        ServerSocketChannel d;
        synchronized (stateLock) {
            ensureOpen();
            d = delegate;
            if (d == null) {
                Object v = shown.get(name);
                if (v == null) {
                    v = JdkDefaults.serverSocket(rdma.jdk()).defaultValue(name);
                }
                return name.type().cast(v);
            }
        }
        return d.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return JdkDefaults.serverSocket(rdma.jdk()).options;
    }

    @Override
    public ServerSocket socket() {
        synchronized (stateLock) {
            if (socket == null) {
                try {
                    socket = new RdmaServerSocketAdaptor(this);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }
            return socket;
        }
    }

    @Override
    public String toString() {
        if (!isOpen()) {
            return "RdmaServerSocketChannel[closed]";
        }
        ServerSocketChannel d = delegate;
        Listener l = listener;
        // The address as getLocalAddress gives it (and as the JDK's channel prints it): no host name.
        if (d != null && l != null) {
            return "RdmaServerSocketChannel[tcp and " + l.engine().fabricName() + " " + channelAddressKept() + "]";
        }
        if (d != null) {
            return "RdmaServerSocketChannel[tcp " + d + "]";
        }
        return l == null ? "RdmaServerSocketChannel[unbound]"
                : "RdmaServerSocketChannel[" + l.engine().fabricName() + " " + channelAddressKept() + "]";
    }
}
