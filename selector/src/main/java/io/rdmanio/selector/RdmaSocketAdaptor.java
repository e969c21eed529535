package io.rdmanio.selector;

import io.rdmanio.selector.config.RunStats;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.SocketChannel;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The {@link Socket} view of an {@link RdmaSocketChannel}, as the JDK's socket adaptor: streams (reads honour
 * SO_TIMEOUT), connect with a timeout, options and state. Once the channel is on the JDK's TCP, stream and
 * option calls go to the JDK channel's own socket, which keeps their semantics exactly.
 *
 * <p>Thread-safe as the channel it views.
 */
final class RdmaSocketAdaptor extends Socket {

    private final RdmaSocketChannel ch;
    private volatile int timeoutMillis;

    RdmaSocketAdaptor(RdmaSocketChannel ch) throws SocketException {
        super(new NoSocketImpl());
        this.ch = ch;
    }

    /** The JDK socket underneath, once the channel is routed to TCP. */
    private Socket jdk() {
        SocketChannel d = ch.delegateChannel();
        return d == null ? null : d.socket();
    }

    @Override
    public SocketChannel getChannel() {
        return ch;
    }

    @Override
    public void connect(SocketAddress remote) throws IOException {
        connect(remote, 0);
    }

    /**
     * As the running JDK's adaptor, in its order: the address given (null: an argument error); on JDK 25, an
     * unresolved address ("Socket is closed", "Already connected", or else the socket is closed and the
     * {@code UnknownHostException} thrown); the timeout; then the address as the channel checks it (on JDK 17
     * unresolved: {@code UnknownHostException}), the blocking mode, and then the channel's state: closed
     * ({@code AsynchronousCloseException}, as the JDK's blocking connect finds it), connected
     * ({@code AlreadyConnectedException}: passed on as it is on JDK 17, "Already connected" on JDK 25). See
     * {@link JdkSocketBehaviour}.
     */
    @Override
    public void connect(SocketAddress remote, int timeout) throws IOException {
        if (remote == null) {
            throw new IllegalArgumentException("connect: The address can't be null");
        }
        if (remote instanceof InetSocketAddress && ((InetSocketAddress) remote).isUnresolved()
                && JdkSocketBehaviour.adaptorConnectChecksUnresolvedFirst()) {
            if (!ch.isOpen()) {
                throw new SocketException("Socket is closed");
            }
            if (ch.isConnected()) {
                throw new SocketException("Already connected");
            }
            close();
            throw AdaptorExceptions.unknownHost((InetSocketAddress) remote);
        }
        if (timeout < 0) {
            throw new IllegalArgumentException("connect: timeout can't be negative");
        }
        try {
            checkAddress(remote);
            if (!ch.isBlocking()) {
                throw new IllegalBlockingModeException();
            }
            if (isClosed()) {
                throw new AsynchronousCloseException();
            }
            if (timeout == 0) {
                ch.connect(remote);
            } else {
                ch.connect(remote, TimeUnit.MILLISECONDS.toNanos(timeout));
            }
        } catch (RuntimeException e) {
            throw AdaptorExceptions.forConnect(e);
        }
    }

    /** The checks of the JDK channel's connect on the address alone, which its adaptor makes first. */
    private static void checkAddress(SocketAddress remote) {
        if (!(remote instanceof InetSocketAddress)) {
            throw new UnsupportedAddressTypeException();
        }
        if (((InetSocketAddress) remote).isUnresolved()) {
            throw new UnresolvedAddressException();
        }
    }

    /** As the JDK's adaptor: the channel's state exceptions as java.net's ("Already bound", ...). */
    @Override
    public void bind(SocketAddress local) throws IOException {
        try {
            ch.bind(local);
        } catch (RuntimeException e) {
            throw AdaptorExceptions.forSocket(e);
        }
    }

    @Override
    public InetAddress getInetAddress() {
        InetSocketAddress a = remote();
        return a == null ? null : a.getAddress();
    }

    @Override
    public int getPort() {
        InetSocketAddress a = remote();
        return a == null ? 0 : a.getPort();
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
        return remote();
    }

    /** As the JDK's adaptor: the addresses stay readable after the channel is closed. */
    private InetSocketAddress remote() {
        return ch.remoteAddressKept();
    }

    private InetSocketAddress local() {
        return ch.localAddressKept();
    }

    @Override
    public InetAddress getLocalAddress() {
        // As the JDK's adaptor: the wildcard address once closed or while unbound.
        InetSocketAddress a = isClosed() ? null : local();
        return a == null ? new InetSocketAddress(0).getAddress() : a.getAddress();
    }

    @Override
    public int getLocalPort() {
        InetSocketAddress a = local();
        return a == null ? -1 : a.getPort();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return local();
    }

    @Override
    public InputStream getInputStream() throws IOException {
        ensureStreamable();
        if (isInputShutdown()) {
            throw new SocketException("Socket input is shutdown");
        }
        Socket s = jdk();
        if (s != null) {
            s.setSoTimeout(timeoutMillis);
            return new DelegateInputStream(s.getInputStream());
        }
        return new InputStream() {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                int n = read(one, 0, 1);
                return n < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                Objects.checkFromIndexSize(off, len, b.length);
                if (len == 0) {
                    return 0;
                }
                return ch.timedRead(ByteBuffer.wrap(b, off, len), TimeUnit.MILLISECONDS.toNanos(timeoutMillis));
            }

            @Override
            public int available() throws IOException {
                return ch.available();
            }

            @Override
            public void close() throws IOException {
                ch.close();
            }
        };
    }

    @Override
    public OutputStream getOutputStream() throws IOException {
        ensureStreamable();
        if (isOutputShutdown()) {
            throw new SocketException("Socket output is shutdown");
        }
        Socket s = jdk();
        if (s != null) {
            return new DelegateOutputStream(s.getOutputStream());
        }
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                Objects.checkFromIndexSize(off, len, b.length);
                if (len == 0) {
                    // As the JDK's adaptor stream: nothing to write returns at once, whatever the state.
                    return;
                }
                if (!ch.isBlocking()) {
                    throw new IllegalBlockingModeException();
                }
                if (ch.isOutputShutdown()) {
                    // As the JDK's adaptor stream (its channel's write throws AsynchronousCloseException instead).
                    throw new java.nio.channels.ClosedChannelException();
                }
                ByteBuffer bb = ByteBuffer.wrap(b, off, len);
                boolean began = false;
                try {
                    while (bb.hasRemaining()) {
                        ch.write(bb);
                        began = true;
                    }
                } catch (java.nio.channels.ClosedChannelException e) {
                    if (!began || e instanceof java.nio.channels.AsynchronousCloseException) {
                        throw e;
                    }
                    // As the JDK's adaptor stream, which writes the whole array in one blocking call: a close
                    // between two of this loop's writes is an asynchronous close of that call (by an interrupt:
                    // ClosedByInterruptException).
                    throw Thread.currentThread().isInterrupted()
                        ? new java.nio.channels.ClosedByInterruptException()
                        : new java.nio.channels.AsynchronousCloseException();
                }
            }

            @Override
            public void close() throws IOException {
                ch.close();
            }
        };
    }

    /** After a failure that closed the JDK channel underneath (an interrupt), this channel is closed too. */
    private IOException afterFailure(IOException e) {
        SocketChannel d = ch.delegateChannel();
        if (d != null && !d.isOpen()) {
            try {
                ch.close();
            } catch (IOException ignore) {
                // The failure is what the caller reports.
            }
        }
        return e;
    }

    /** The JDK socket's stream, closing this channel (not only the one underneath) when it closes. */
    private final class DelegateInputStream extends java.io.FilterInputStream {
        DelegateInputStream(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            try {
                int b = in.read();
                if (b >= 0) {
                    RunStats.get().bytes(false, 1);
                }
                return b;
            } catch (IOException e) {
                throw afterFailure(e);
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                int n = in.read(b, off, len);
                RunStats.get().bytes(false, n);
                return n;
            } catch (IOException e) {
                throw afterFailure(e);
            }
        }

        @Override
        public void close() throws IOException {
            ch.close();
        }
    }

    private final class DelegateOutputStream extends java.io.FilterOutputStream {
        DelegateOutputStream(OutputStream out) {
            super(out);
        }

        @Override
        public void write(int b) throws IOException {
            try {
                out.write(b);
                RunStats.get().bytes(false, 1);
            } catch (IOException e) {
                throw afterFailure(e);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            try {
                out.write(b, off, len);
                RunStats.get().bytes(false, len);
            } catch (IOException e) {
                throw afterFailure(e);
            }
        }

        @Override
        public void close() throws IOException {
            ch.close();
        }
    }

    private void ensureStreamable() throws SocketException {
        if (isClosed()) {
            throw new SocketException("Socket is closed");
        }
        if (!isConnected()) {
            throw new SocketException("Socket is not connected");
        }
    }

    /**
     * As the JDK's adaptor: the value goes to the channel unchecked, so a closed channel says "Socket is closed"
     * before the value is looked at, and a bad value is refused in the channel's words.
     */
    private <T> void set(SocketOption<T> name, T value) throws SocketException {
        try {
            ch.setOption(name, value);
        } catch (IOException e) {
            throw AdaptorExceptions.forSocket(e);
        }
    }

    private <T> T get(SocketOption<T> name) throws SocketException {
        try {
            return ch.getOption(name);
        } catch (IOException e) {
            throw AdaptorExceptions.forSocket(e);
        }
    }

    @Override
    public void setTcpNoDelay(boolean on) throws SocketException {
        set(StandardSocketOptions.TCP_NODELAY, on);
    }

    @Override
    public boolean getTcpNoDelay() throws SocketException {
        return get(StandardSocketOptions.TCP_NODELAY);
    }

    /** As the JDK's adaptor: a negative linger is the channel's "off" (-1), not java.net's argument error. */
    @Override
    public void setSoLinger(boolean on, int linger) throws SocketException {
        set(StandardSocketOptions.SO_LINGER, on ? linger : -1);
    }

    @Override
    public int getSoLinger() throws SocketException {
        return get(StandardSocketOptions.SO_LINGER);
    }

    @Override
    public void sendUrgentData(int data) throws IOException {
        Socket s = jdk();
        if (s != null) {
            s.sendUrgentData(data);
            return;
        }
        // As the JDK's adaptor: through the channel, its exceptions as they are.
        if (ch.sendOutOfBandData((byte) data) == 0) {
            throw new IOException("Socket buffer full");
        }
    }

    @Override
    public void setOOBInline(boolean on) throws SocketException {
        SocketOption<Boolean> option = oobInlineOption();
        if (option == null) {
            Socket s = jdk();
            if (s != null) {
                s.setOOBInline(on);
            } else if (on) {
                throw new SocketException("SO_OOBINLINE is not supported by this JDK's socket channels");
            }
            return;
        }
        // Through the channel, as the JDK's adaptor does: accepted before connect (the channel keeps it and hands it
        // to the JDK's channel if routed to TCP); on a fabric the connection reads the peer's urgent bytes inline.
        set(option, on);
    }

    @Override
    public boolean getOOBInline() throws SocketException {
        SocketOption<Boolean> option = oobInlineOption();
        if (option == null) {
            Socket s = jdk();
            return s != null && s.getOOBInline();
        }
        return get(option);
    }

    /** The JDK's own SO_OOBINLINE (internal to java.base), as its socket channels list it; null if they do not. */
    @SuppressWarnings("unchecked")
    private SocketOption<Boolean> oobInlineOption() {
        for (SocketOption<?> o : ch.supportedOptions()) {
            if (o.name().equals("SO_OOBINLINE") && o.type() == Boolean.class) {
                return (SocketOption<Boolean>) o;
            }
        }
        return null;
    }

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        if (isClosed()) {
            throw new SocketException("Socket is closed");
        }
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout < 0");
        }
        timeoutMillis = timeout;
        Socket s = jdk();
        if (s != null) {
            s.setSoTimeout(timeout);
        }
    }

    @Override
    public int getSoTimeout() throws SocketException {
        if (isClosed()) {
            throw new SocketException("Socket is closed");
        }
        return timeoutMillis;
    }

    @Override
    public void setSendBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("Invalid send size");
        }
        set(StandardSocketOptions.SO_SNDBUF, size);
    }

    @Override
    public int getSendBufferSize() throws SocketException {
        return get(StandardSocketOptions.SO_SNDBUF);
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("Invalid receive size");
        }
        set(StandardSocketOptions.SO_RCVBUF, size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return get(StandardSocketOptions.SO_RCVBUF);
    }

    @Override
    public void setKeepAlive(boolean on) throws SocketException {
        set(StandardSocketOptions.SO_KEEPALIVE, on);
    }

    @Override
    public boolean getKeepAlive() throws SocketException {
        return get(StandardSocketOptions.SO_KEEPALIVE);
    }

    /** As the JDK's adaptor: the channel checks the value ("Invalid IP_TOS value"), after it checks it is open. */
    @Override
    public void setTrafficClass(int tc) throws SocketException {
        set(StandardSocketOptions.IP_TOS, tc);
    }

    @Override
    public int getTrafficClass() throws SocketException {
        return get(StandardSocketOptions.IP_TOS);
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        set(StandardSocketOptions.SO_REUSEADDR, on);
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        return get(StandardSocketOptions.SO_REUSEADDR);
    }

    @Override
    public <T> Socket setOption(SocketOption<T> name, T value) throws IOException {
        ch.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return ch.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return ch.supportedOptions();
    }

    @Override
    public void setPerformancePreferences(int connectionTime, int latency, int bandwidth) {
        // As the JDK: no effect.
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }

    @Override
    public void shutdownInput() throws IOException {
        ensureShutdownable();
        ch.shutdownInput();
    }

    @Override
    public void shutdownOutput() throws IOException {
        ensureShutdownable();
        ch.shutdownOutput();
    }

    /** As the JDK's adaptor, which passes the channel's own ClosedChannelException on. */
    private void ensureShutdownable() throws IOException {
        if (isClosed()) {
            throw new ClosedChannelException();
        }
        ensureStreamable();
    }

    @Override
    public boolean isConnected() {
        return ch.isConnected();
    }

    @Override
    public boolean isBound() {
        return local() != null;
    }

    @Override
    public boolean isClosed() {
        return !ch.isOpen();
    }

    @Override
    public boolean isInputShutdown() {
        Socket s = jdk();
        return s != null ? s.isInputShutdown() : ch.isInputShutdown();
    }

    @Override
    public boolean isOutputShutdown() {
        Socket s = jdk();
        return s != null ? s.isOutputShutdown() : ch.isOutputShutdown();
    }

    @Override
    public String toString() {
        if (isConnected()) {
            return "Socket[addr=" + getInetAddress() + ",port=" + getPort() + ",localport=" + getLocalPort() + "]";
        }
        return "Socket[unconnected]";
    }
}
