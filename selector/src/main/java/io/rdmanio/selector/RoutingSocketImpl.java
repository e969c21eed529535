package io.rdmanio.selector;

import io.rdmanio.selector.config.Route;
import io.rdmanio.selector.config.RouteStats;
import io.rdmanio.selector.config.RunStats;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketImpl;
import java.net.SocketOption;
import java.net.SocketOptions;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The {@link SocketImpl} of every {@link Socket} and {@link ServerSocket} once the agent routes java.net (and so
 * {@code HttpURLConnection}, {@code SocketFactory.getDefault()} and the libraries built on them): the same rules
 * as NIO channels decide, once per socket, where it goes.
 *
 * <ul>
 *   <li>A socket the rules leave on TCP is the JDK's own implementation, to which every call is handed (the SOCKS
 *       one around a platform one for a client, as {@code new Socket()} has without a factory): its semantics
 *       are the JDK's exactly.</li>
 *   <li>A client whose connect a rule routes (one bound first connects from the port its JDK socket keeps), and
 *       a server whose bind a rule routes, become an {@link RdmaSocketChannel} or {@link RdmaServerSocketChannel} in blocking mode, used
 *       through their socket adaptors, so that a java.net program and an NIO program reach each other over the
 *       fabric. Channel exceptions are reported as java.net reports them ({@code SocketException}
 *       "Socket closed" for a socket closed by another thread, and so on).</li>
 * </ul>
 *
 * <p>Until a client connects (a server binds) the JDK's implementation holds the options the program sets; a
 * routed socket gets them replayed on its channel. Accessed under the owning {@code Socket}'s own rules: one
 * thread sets up, then reads, writes and close may come from different threads, which the JDK's implementation
 * and the channels each allow.
 */
final class RoutingSocketImpl extends SocketImpl {

    private final RdmaSelectorProvider rdma;
    private final boolean server;

    /** The JDK's implementation: until routing decides, and for good when it says TCP; null once routed. */
    private volatile SocketImpl jdk;
    /** A routed (or accepted) client's channel and its adaptor. */
    private volatile RdmaSocketChannel channel;
    /** A routed client's channel while its connect is under way: a close from another thread ends the connect. */
    private volatile RdmaSocketChannel connecting;
    private volatile Socket face;
    /** A read of the routed input returned -1: later reads return -1 too, even after close (as the JDK's). */
    private volatile boolean readEof;
    /** {@link #close} began: a write it ends fails as "Socket closed", as the JDK's does. */
    private volatile boolean closing;
    /** A routed server's channel, made at bind. */
    private volatile RdmaServerSocketChannel serverChannel;
    /** Where a routed server binds, between bind and listen. */
    private InetSocketAddress pendingBind;
    private volatile int acceptTimeoutMillis;
    /**
     * A routed server's {@code IP_TOS} as the JDK's server socket reports it (null: never set). The fabric has no
     * type of service: the value is checked and kept, as the option of a server socket that sends no packets.
     */
    private volatile Integer serverTrafficClass;
    private boolean boundExplicitly;
    /** Options set before routing decided, replayed on a routed socket's channel in order. */
    private final List<Object[]> earlyOptions = new ArrayList<>();

    RoutingSocketImpl(RdmaSelectorProvider rdma, boolean server) {
        this.rdma = rdma;
        this.server = server;
    }

    // ------------------------------------------------------------------ set-up

    @Override
    protected void create(boolean stream) throws IOException {
        if (!stream) {
            throw new SocketException("rdmanio routes stream sockets only");
        }
        SocketImpl impl = server ? JdkSocketImpls.newPlatform(true) : JdkSocketImpls.newClient();
        JdkSocketImpls.create(impl, true);
        jdk = impl;
    }

    @Override
    protected void connect(String host, int port) throws IOException {
        connect(new InetSocketAddress(host, port), 0);
    }

    @Override
    protected void connect(InetAddress address, int port) throws IOException {
        connect(new InetSocketAddress(address, port), 0);
    }

    @Override
    protected void connect(SocketAddress address, int timeout) throws IOException {
        SocketImpl impl = jdk;
        if (impl == null || server) {
            throw new SocketException(channel != null ? "Already connected" : "Socket closed");
        }
        if (address instanceof InetSocketAddress && !((InetSocketAddress) address).isUnresolved()) {
            InetSocketAddress isa = (InetSocketAddress) address;
            if (isa.getAddress().isAnyLocalAddress()) {
                // As the JDK's socket: the wildcard address means this host, by its name; routed as that.
                isa = new InetSocketAddress(InetAddress.getLocalHost(), isa.getPort());
                address = isa;
            }
            Route r = rdma.config().router().forConnect(isa);
            if (r.usesFabric()) {
                connectRouted(impl, isa, timeout);
                return;
            }
            RouteStats.connect(isa, r);
        }
        JdkSocketImpls.connect(impl, address, timeout);
        RunStats.get().connectionOpened(false);
    }

    /** A routed connect: the channel counts its route and connection itself. */
    private void connectRouted(SocketImpl impl, InetSocketAddress isa, int timeout) throws IOException {
        RdmaSocketChannel ch = (RdmaSocketChannel) rdma.openSocketChannel();
        ch.actAsJavaNetSocket();
        Socket s = ch.socket();
        try {
            replayEarlyOptions(s);
            if (boundExplicitly) {
                // The JDK's socket keeps the port it was bound to: the connection connects from there.
                Object bindAddr = impl.getOption(SocketOptions.SO_BINDADDR);
                InetAddress host = bindAddr instanceof InetAddress ? (InetAddress) bindAddr : null;
                ch.holdPort(() -> JdkSocketImpls.close(impl), new InetSocketAddress(host, JdkSocketImpls.localPort(impl)));
            }
            connecting = ch;
            if (jdk == null) {
                // Closed by another thread before the connect began.
                throw new SocketException("Socket closed");
            }
            s.connect(isa, timeout);
        } catch (IOException | RuntimeException e) {
            // As the JDK's socket implementation: a failed connect closes it (its port too), whether or not the
            // Socket says so (JDK 25's closes itself, JDK 17's keeps isClosed false).
            ch.close();
            JdkSocketImpls.close(impl);
            // Closed for good: a second connect fails "Socket closed", as the JDK's closed implementation does.
            jdk = null;
            throw javaNet(e);
        } finally {
            connecting = null;
        }
        channel = ch;
        face = s;
        jdk = null;
        if (!boundExplicitly) {
            JdkSocketImpls.close(impl);
        }
    }

    @Override
    protected void bind(InetAddress host, int port) throws IOException {
        SocketImpl impl = jdk;
        if (impl == null) {
            throw new SocketException("Socket closed");
        }
        if (server) {
            InetSocketAddress isa = new InetSocketAddress(host, port);
            Route r = rdma.config().router().forBind(isa);
            if (r.usesFabric()) {
                // The channel binds and listens in one step, with the backlog listen() brings.
                RdmaServerSocketChannel ch = (RdmaServerSocketChannel) rdma.openServerSocketChannel();
                ch.actAsJavaNetSocket();
                pendingBind = isa;
                serverChannel = ch;
                return;
            }
            RouteStats.bind(isa, r);
        } else {
            // The JDK's socket binds (its errors, the kernel's port); the connect still routes, from this port.
            boundExplicitly = true;
        }
        JdkSocketImpls.bind(impl, host, port);
    }

    @Override
    protected void listen(int backlog) throws IOException {
        RdmaServerSocketChannel ch = serverChannel;
        if (ch == null) {
            SocketImpl impl = jdk;
            if (impl == null) {
                throw new SocketException("Socket closed");
            }
            JdkSocketImpls.listen(impl, backlog);
            return;
        }
        try {
            for (Object[] o : earlyOptions) {
                if (o[0] instanceof SocketOption) {
                    setServerOption((SocketOption<?>) o[0], o[1], ch);
                } else {
                    setRoutedServerOption(ch, (Integer) o[0], o[1]);
                }
            }
            ch.bind(pendingBind, backlog);
        } catch (IOException | RuntimeException e) {
            throw javaNet(e);
        }
        SocketImpl impl = jdk;
        jdk = null;
        if (impl != null) {
            JdkSocketImpls.close(impl);
        }
    }

    @Override
    protected void accept(SocketImpl s) throws IOException {
        if (!(s instanceof RoutingSocketImpl)) {
            throw new IOException("An instance of " + getClass() + " cannot accept a connection with an instance of "
                    + s.getClass());
        }
        RoutingSocketImpl into = (RoutingSocketImpl) s;
        RdmaServerSocketChannel ch = serverChannel;
        if (ch != null) {
            int timeout = acceptTimeoutMillis;
            RdmaSocketChannel accepted;
            try {
                accepted = (RdmaSocketChannel) ch.timedAccept(TimeUnit.MILLISECONDS.toNanos(timeout));
            } catch (SocketTimeoutException e) {
                throw new SocketTimeoutException("Accept timed out");
            } catch (IOException e) {
                // An interrupted virtual thread: InterruptedIOException, on which the JDK's ServerSocket closes
                // itself and says "Closed by interrupt", as over TCP.
                throw streamFailure(e);
            } catch (RuntimeException e) {
                throw javaNet(e);
            }
            into.adopt(accepted);
            inheritTrafficClass(accepted);
            return;
        }
        SocketImpl impl = jdk;
        if (impl == null) {
            throw new SocketException("Socket closed");
        }
        SocketImpl platform = JdkSocketImpls.newPlatform(false);
        JdkSocketImpls.accept(impl, platform);
        into.adopt(platform);
        RunStats.get().connectionOpened(false);
    }

    /**
     * As Linux's accepted socket, a clone of its listener: it has the listener's {@code IP_TOS}, which the fabric's
     * listener does not carry, so it is set here.
     */
    private void inheritTrafficClass(RdmaSocketChannel accepted) throws IOException {
        Integer tc = serverTrafficClass;
        if (tc != null) {
            try {
                accepted.setOption(StandardSocketOptions.IP_TOS, tc);
            } catch (IOException | RuntimeException e) {
                accepted.close();
                throw javaNet(e);
            }
        }
    }

    /** An accepted fabric (or, under a {@code both} rule, TCP) connection. */
    private void adopt(RdmaSocketChannel accepted) throws IOException {
        SocketImpl before = jdk;
        accepted.actAsJavaNetSocket();
        Socket s = accepted.socket();
        replayEarlyOptions(s);
        channel = accepted;
        face = s;
        jdk = null;
        if (before != null) {
            JdkSocketImpls.close(before);
        }
    }

    /** An accepted TCP connection. */
    private void adopt(SocketImpl platform) throws IOException {
        SocketImpl before = jdk;
        jdk = platform;
        for (Object[] o : earlyOptions) {
            if (o[0] instanceof SocketOption) {
                setJdkOption(platform, (SocketOption<?>) o[0], o[1]);
            } else {
                platform.setOption((Integer) o[0], o[1]);
            }
        }
        if (before != null) {
            JdkSocketImpls.close(before);
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> void setJdkOption(SocketImpl impl, SocketOption<T> name, Object value) throws IOException {
        JdkSocketImpls.setOption(impl, name, (T) value);
    }

    private void replayEarlyOptions(Socket s) throws IOException {
        for (Object[] o : earlyOptions) {
            if (o[0] instanceof SocketOption) {
                setFaceOption(s, (SocketOption<?>) o[0], o[1]);
            } else {
                setRoutedOption(s, (Integer) o[0], o[1]);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> void setFaceOption(Socket s, SocketOption<T> name, Object value) throws IOException {
        s.setOption(name, (T) value);
    }

    @SuppressWarnings("unchecked")
    private <T> void setServerOption(SocketOption<T> name, Object value, RdmaServerSocketChannel ch)
            throws IOException {
        if (name == StandardSocketOptions.IP_TOS) {
            // As the JDK's server socket: checked (and rounded) by the kernel, kept.
            serverTrafficClass = JdkDefaults.socket(rdma.jdk()).normalized(StandardSocketOptions.IP_TOS, (Integer) value);
            return;
        }
        ch.setOption(name, (T) value);
    }

    // ------------------------------------------------------------------ streams

    @Override
    protected InputStream getInputStream() throws IOException {
        Socket s = face;
        if (s != null) {
            return new RoutedInput(s.getInputStream(), this);
        }
        return JdkSocketImpls.inputStream(jdkOrClosed());
    }

    @Override
    protected OutputStream getOutputStream() throws IOException {
        Socket s = face;
        if (s != null) {
            return new RoutedOutput(s.getOutputStream(), s, this);
        }
        return JdkSocketImpls.outputStream(jdkOrClosed());
    }

    @Override
    protected int available() throws IOException {
        Socket s = face;
        if (s != null) {
            try {
                return s.getInputStream().available();
            } catch (IOException e) {
                throw javaNet(e);
            }
        }
        return JdkSocketImpls.available(jdkOrClosed());
    }

    @Override
    protected void shutdownInput() throws IOException {
        Socket s = face;
        if (s != null) {
            try {
                s.shutdownInput();
            } catch (IOException e) {
                throw javaNet(e);
            }
            return;
        }
        JdkSocketImpls.shutdownInput(jdkOrClosed());
    }

    @Override
    protected void shutdownOutput() throws IOException {
        Socket s = face;
        if (s != null) {
            try {
                s.shutdownOutput();
            } catch (IOException e) {
                throw javaNet(e);
            }
            return;
        }
        JdkSocketImpls.shutdownOutput(jdkOrClosed());
    }

    @Override
    protected void close() throws IOException {
        closing = true;
        RdmaSocketChannel ch = channel;
        if (ch != null) {
            shutdownOutputBeforeClose(ch);
            ch.close();
        }
        RdmaSocketChannel pending = connecting;
        if (pending != null) {
            pending.close();
        }
        RdmaServerSocketChannel sch = serverChannel;
        if (sch != null) {
            sch.close();
        }
        SocketImpl impl = jdk;
        if (impl != null) {
            JdkSocketImpls.close(impl);
        }
    }

    /**
     * As the JDK's socket closes (its {@code NioSocketImpl}): a connected socket whose SO_LINGER is not 0 shuts its
     * output first, so that its peer reads end of stream and then, if this side left bytes unread, meets the
     * reset as Linux reports one after a FIN ("Broken pipe" on its next write, reads ending), not "Connection
     * reset". A channel's own close does not (the JDK's does only when it cannot close at once).
     */
    private static void shutdownOutputBeforeClose(RdmaSocketChannel ch) {
        try {
            if (ch.isConnected() && !ch.isOutputShutdown()
                    && ch.getOption(StandardSocketOptions.SO_LINGER) != 0) {
                ch.shutdownOutput();
            }
        } catch (IOException | RuntimeException e) {
            // A connection already reset or closed: the close below reports nothing either, as the JDK's.
        }
    }

    @Override
    protected void sendUrgentData(int data) throws IOException {
        Socket s = face;
        if (s != null) {
            if (!s.isClosed() && s.isOutputShutdown()) {
                // What the JDK's socket reports: its send of the byte meets the shut output (EPIPE).
                throw new IOException("Broken pipe");
            }
            try {
                s.sendUrgentData(data);
            } catch (IOException | RuntimeException e) {
                throw javaNet(e);
            }
            return;
        }
        JdkSocketImpls.sendUrgentData(jdkOrClosed(), data);
    }

    @Override
    protected boolean supportsUrgentData() {
        if (face != null) {
            return true;
        }
        SocketImpl impl = jdk;
        return impl != null && JdkSocketImpls.supportsUrgentData(impl);
    }

    private SocketImpl jdkOrClosed() throws SocketException {
        SocketImpl impl = jdk;
        if (impl == null) {
            throw new SocketException("Socket closed");
        }
        return impl;
    }

    // ------------------------------------------------------------------ addresses

    @Override
    protected InetAddress getInetAddress() {
        InetSocketAddress bound = pendingBind;
        if (bound != null && serverChannel != null) {
            // As the JDK's: a server socket's address is the InetAddress given to bind, host name and all, also
            // once it is closed.
            return bound.getAddress();
        }
        InetSocketAddress a = routedAddress(true);
        if (a != null) {
            return a.getAddress();
        }
        SocketImpl impl = jdk;
        return impl == null ? null : JdkSocketImpls.inetAddress(impl);
    }

    @Override
    protected int getPort() {
        InetSocketAddress a = routedAddress(true);
        if (a != null) {
            return a.getPort();
        }
        SocketImpl impl = jdk;
        return impl == null ? 0 : JdkSocketImpls.port(impl);
    }

    @Override
    protected int getLocalPort() {
        InetSocketAddress a = routedAddress(false);
        if (a != null) {
            return a.getPort();
        }
        SocketImpl impl = jdk;
        return impl == null ? -1 : JdkSocketImpls.localPort(impl);
    }

    @Override
    protected FileDescriptor getFileDescriptor() {
        SocketImpl impl = jdk;
        return impl == null ? fd : JdkSocketImpls.fileDescriptor(impl);
    }

    /**
     * A routed socket's remote ({@code remote}) or local address; a routed server socket's bound address for
     * both (a server's "address" is the one it listens on); {@code null} when not routed. Kept after close, as the
     * JDK's socket keeps them (its ports, addresses and {@code toString} answer as before the close).
     */
    private InetSocketAddress routedAddress(boolean remote) {
        RdmaServerSocketChannel sch = serverChannel;
        if (sch != null) {
            InetSocketAddress a = sch.localAddressKept();
            return a != null ? a : pendingBind;
        }
        RdmaSocketChannel ch = channel;
        if (ch != null) {
            return remote ? ch.remoteAddressKept() : ch.localAddressKept();
        }
        return null;
    }

    // ------------------------------------------------------------------ options

    @Override
    public void setOption(int optID, Object value) throws SocketException {
        RdmaServerSocketChannel sch = serverChannel;
        if (sch != null && jdk == null) {
            setRoutedServerOption(sch, optID, value);
            return;
        }
        Socket s = face;
        if (s != null) {
            ensureFaceOpen(s);
            setRoutedOption(s, optID, value);
            return;
        }
        SocketImpl impl = jdk;
        if (impl == null) {
            throw new SocketException("Socket closed");
        }
        if (optID == SocketOptions.SO_TIMEOUT && sch != null) {
            // A routed server between bind and listen: the timeout is the adaptor's, not the JDK socket's.
            acceptTimeoutMillis = (Integer) value;
            return;
        }
        impl.setOption(optID, value);
        if (optID == SocketOptions.SO_TIMEOUT && server) {
            acceptTimeoutMillis = (Integer) value;
        }
        earlyOptions.add(new Object[] {optID, value});
    }

    @Override
    public Object getOption(int optID) throws SocketException {
        RdmaServerSocketChannel sch = serverChannel;
        if (sch != null && optID == SocketOptions.SO_TIMEOUT) {
            return acceptTimeoutMillis;
        }
        if (sch != null && jdk == null) {
            return routedServerOption(sch, optID);
        }
        Socket s = face;
        if (s != null) {
            ensureFaceOpen(s);
            return routedOption(s, optID);
        }
        SocketImpl impl = jdk;
        if (impl == null) {
            throw new SocketException("Socket closed");
        }
        return impl.getOption(optID);
    }

    @Override
    protected <T> void setOption(SocketOption<T> name, T value) throws IOException {
        RdmaServerSocketChannel sch = serverChannel;
        if (sch != null) {
            try {
                setServerOption(name, value, sch);
            } catch (IOException | RuntimeException e) {
                throw javaNet(e);
            }
            return;
        }
        Socket s = face;
        if (s != null) {
            s.setOption(name, value);
            return;
        }
        JdkSocketImpls.setOption(jdkOrClosed(), name, value);
        earlyOptions.add(new Object[] {name, value});
    }

    @Override
    protected <T> T getOption(SocketOption<T> name) throws IOException {
        RdmaServerSocketChannel sch = serverChannel;
        if (sch != null) {
            try {
                if (name == StandardSocketOptions.IP_TOS) {
                    if (!sch.isOpen()) {
                        throw new ClosedChannelException();
                    }
                    Integer tc = serverTrafficClass;
                    return name.type().cast(tc != null ? tc
                        : JdkDefaults.socket(rdma.jdk()).defaultValue(StandardSocketOptions.IP_TOS));
                }
                return sch.getOption(name);
            } catch (IOException | RuntimeException e) {
                throw javaNet(e);
            }
        }
        Socket s = face;
        if (s != null) {
            return s.getOption(name);
        }
        return JdkSocketImpls.getOption(jdkOrClosed(), name);
    }

    @Override
    protected Set<SocketOption<?>> supportedOptions() {
        // A routed socket lists what the JDK's own socket of its kind lists (a server's IP_TOS, no client
        // SO_OOBINLINE), not what the channel behind it does.
        if (serverChannel != null || face != null) {
            return JdkSocketImpls.supportedOptions(JdkSocketImpls.newPlatform(server));
        }
        SocketImpl impl = jdk;
        return impl != null ? JdkSocketImpls.supportedOptions(impl)
                : (server ? JdkSocketImpls.supportedOptions(JdkSocketImpls.newPlatform(true))
                        : JdkSocketImpls.supportedOptions(JdkSocketImpls.newPlatform(false)));
    }

    @Override
    protected void setPerformancePreferences(int connectionTime, int latency, int bandwidth) {
        SocketImpl impl = jdk;
        if (impl != null) {
            JdkSocketImpls.setPerformancePreferences(impl, connectionTime, latency, bandwidth);
        }
    }

    /**
     * As the JDK's socket implementation, whose integer options check first that it is open: the few that
     * {@code Socket} passes on without checking itself ({@code getTrafficClass}) say "Socket closed" as the
     * implementation's own words, not the adaptor's "Socket is closed".
     */
    private static void ensureFaceOpen(Socket s) throws SocketException {
        if (s.isClosed()) {
            throw new SocketException("Socket closed");
        }
    }

    /** java.net's integer options on a routed socket's adaptor. */
    private static void setRoutedOption(Socket s, int optID, Object value) throws SocketException {
        switch (optID) {
            case SocketOptions.TCP_NODELAY -> s.setTcpNoDelay((Boolean) value);
            case SocketOptions.SO_LINGER -> {
                if (value instanceof Integer) {
                    s.setSoLinger(true, (Integer) value);
                } else {
                    s.setSoLinger(false, 0);
                }
            }
            case SocketOptions.SO_TIMEOUT -> s.setSoTimeout((Integer) value);
            case SocketOptions.SO_SNDBUF -> s.setSendBufferSize((Integer) value);
            case SocketOptions.SO_RCVBUF -> s.setReceiveBufferSize((Integer) value);
            case SocketOptions.SO_KEEPALIVE -> s.setKeepAlive((Boolean) value);
            case SocketOptions.SO_OOBINLINE -> s.setOOBInline((Boolean) value);
            case SocketOptions.IP_TOS -> s.setTrafficClass((Integer) value);
            case SocketOptions.SO_REUSEADDR -> s.setReuseAddress((Boolean) value);
            default -> throw new SocketException("Unknown option " + optID);
        }
    }

    private static Object routedOption(Socket s, int optID) throws SocketException {
        return switch (optID) {
            case SocketOptions.TCP_NODELAY -> s.getTcpNoDelay();
            case SocketOptions.SO_LINGER -> {
                int l = s.getSoLinger();
                yield l < 0 ? (Object) Boolean.FALSE : (Object) l;
            }
            case SocketOptions.SO_TIMEOUT -> s.getSoTimeout();
            case SocketOptions.SO_SNDBUF -> s.getSendBufferSize();
            case SocketOptions.SO_RCVBUF -> s.getReceiveBufferSize();
            case SocketOptions.SO_KEEPALIVE -> s.getKeepAlive();
            case SocketOptions.SO_OOBINLINE -> s.getOOBInline();
            case SocketOptions.IP_TOS -> s.getTrafficClass();
            case SocketOptions.SO_REUSEADDR -> s.getReuseAddress();
            case SocketOptions.SO_BINDADDR -> s.getLocalAddress();
            default -> throw new SocketException("Unknown option " + optID);
        };
    }

    private void setRoutedServerOption(RdmaServerSocketChannel ch, int optID, Object value) throws SocketException {
        try {
            switch (optID) {
                case SocketOptions.SO_TIMEOUT -> acceptTimeoutMillis = (Integer) value;
                case SocketOptions.SO_RCVBUF -> ch.setOption(java.net.StandardSocketOptions.SO_RCVBUF, (Integer) value);
                case SocketOptions.SO_REUSEADDR -> ch.setOption(java.net.StandardSocketOptions.SO_REUSEADDR,
                    (Boolean) value);
                default -> {
                    // Options that mean something only on connected sockets (TCP_NODELAY, SO_KEEPALIVE, ...) are
                    // taken by the JDK's server socket and handed to accepted ones by nobody: ignored here too.
                }
            }
        } catch (IOException e) {
            throw (SocketException) javaNet(e);
        }
    }

    private Object routedServerOption(RdmaServerSocketChannel ch, int optID) throws SocketException {
        try {
            return switch (optID) {
                case SocketOptions.SO_TIMEOUT -> acceptTimeoutMillis;
                case SocketOptions.SO_RCVBUF -> ch.getOption(java.net.StandardSocketOptions.SO_RCVBUF);
                case SocketOptions.SO_REUSEADDR -> ch.getOption(java.net.StandardSocketOptions.SO_REUSEADDR);
                case SocketOptions.SO_BINDADDR -> {
                    InetSocketAddress a = (InetSocketAddress) ch.getLocalAddress();
                    yield a == null ? null : a.getAddress();
                }
                default -> throw new SocketException("Unknown option " + optID);
            };
        } catch (IOException e) {
            throw (SocketException) javaNet(e);
        }
    }

    // ------------------------------------------------------------------ java.net's exceptions

    /**
     * A channel's exception as java.net's socket reports the same event: a socket closed (by another thread, or
     * before the call) is {@code SocketException} "Socket closed", an interrupt that closed it "Closed by
     * interrupt"; other I/O errors are {@code SocketException}s with the channel's message (timeouts, connect
     * refusals and unknown hosts keep their own classes, as java.net's do).
     */
    static IOException javaNet(Exception e) {
        if (e instanceof ClosedByInterruptException) {
            return likeTheJdks(new SocketException("Closed by interrupt"), e);
        }
        if (e instanceof ClosedChannelException) {
            return likeTheJdks(new SocketException("Socket closed"), e);
        }
        if (e instanceof SocketException || e instanceof SocketTimeoutException
                || e instanceof UnknownHostException || e instanceof java.net.ConnectException) {
            return (IOException) e;
        }
        if (e instanceof IOException) {
            return likeTheJdks(new SocketException(e.getMessage()), e);
        }
        if (e instanceof java.nio.channels.UnresolvedAddressException) {
            return likeTheJdks(new UnknownHostException(e.getMessage()), e);
        }
        if (e instanceof RuntimeException) {
            throw (RuntimeException) e;
        }
        return new IOException(e);
    }

    /**
     * As the JDK's socket reports a channel's failure ({@code NioSocketImpl}): a new exception with the failure's
     * stack trace and no cause, so a program that walks the cause chain finds what it finds on the JDK.
     */
    private static <E extends IOException> E likeTheJdks(E se, Exception cause) {
        se.setStackTrace(cause.getStackTrace());
        return se;
    }

    /**
     * A stream call's failure as the JDK's implementation reports it to its {@code Socket}: an interrupt of a
     * virtual thread (which closed the channel) is an {@code InterruptedIOException}, which the {@code Socket}'s
     * own stream turns into closing the socket and "Closed by interrupt"; anything else as {@link #javaNet}.
     */
    static IOException streamFailure(IOException e) {
        if (e instanceof ClosedByInterruptException && InterruptPolicy.onVirtualThread()) {
            java.io.InterruptedIOException ie = new java.io.InterruptedIOException();
            ie.initCause(e);
            return ie;
        }
        return javaNet(e);
    }

    /**
     * A routed socket's input: the adaptor's stream, with java.net's exceptions. As the JDK's socket input, a read
     * of nothing returns 0 whatever the state, and once a read returned -1 every later read does, even after the
     * socket is closed (the JDK keeps that for compatibility with its older implementation).
     */
    private static final class RoutedInput extends InputStream {
        /** The most one read takes, as the JDK's socket reads ({@code NioSocketImpl}: 128 KiB). */
        private static final int MAX_READ = 128 * 1024;

        private final InputStream in;
        private final RoutingSocketImpl impl;

        RoutedInput(InputStream in, RoutingSocketImpl impl) {
            this.in = in;
            this.impl = impl;
        }

        @Override
        public int read() throws IOException {
            if (impl.readEof) {
                return -1;
            }
            try {
                return atEnd(in.read());
            } catch (IOException e) {
                throw streamFailure(e);
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            if (impl.readEof) {
                return -1;
            }
            try {
                return atEnd(in.read(b, off, Math.min(len, MAX_READ)));
            } catch (IOException e) {
                throw streamFailure(e);
            }
        }

        private int atEnd(int n) {
            if (n < 0) {
                impl.readEof = true;
            }
            return n;
        }

        @Override
        public int available() throws IOException {
            try {
                return in.available();
            } catch (IOException e) {
                throw streamFailure(e);
            }
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    /**
     * A routed socket's output: the adaptor's stream, with java.net's exceptions. A write after shutdownOutput
     * fails as the kernel's write does there (EPIPE, "Broken pipe"); the channel's stream says the channel is
     * closed for output.
     */
    private static final class RoutedOutput extends OutputStream {
        private final OutputStream out;
        private final Socket face;
        private final RoutingSocketImpl impl;

        RoutedOutput(OutputStream out, Socket face, RoutingSocketImpl impl) {
            this.out = out;
            this.face = face;
            this.impl = impl;
        }

        private IOException failure(IOException e) {
            if (impl.closing) {
                // As the JDK's: a write that a close ended (its shutdown of the output woke it) is "Socket closed".
                return likeTheJdks(new SocketException("Socket closed"), e);
            }
            if (e instanceof ClosedChannelException && face.isOutputShutdown() && !face.isClosed()) {
                return likeTheJdks(new SocketException("Broken pipe"), e);
            }
            return streamFailure(e);
        }

        @Override
        public void write(int b) throws IOException {
            try {
                out.write(b);
            } catch (IOException e) {
                throw failure(e);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                // As the JDK's socket stream: nothing to write returns at once, whatever the state.
                return;
            }
            try {
                out.write(b, off, len);
            } catch (IOException e) {
                throw failure(e);
            }
        }

        @Override
        public void close() throws IOException {
            out.close();
        }
    }

    @Override
    public String toString() {
        RdmaSocketChannel ch = channel;
        RdmaServerSocketChannel sch = serverChannel;
        return "RoutingSocketImpl[" + (ch != null ? ch : sch != null ? sch : String.valueOf(jdk)) + "]";
    }
}
