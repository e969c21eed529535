package io.rdmanio.selector;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.ServerSocketChannel;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The {@link ServerSocket} view of an {@link RdmaServerSocketChannel}, as the JDK's adaptor: bind, accept with
 * SO_TIMEOUT (SocketTimeoutException), options and state. Thread-safe as the channel it views.
 */
final class RdmaServerSocketAdaptor extends ServerSocket {

    private final RdmaServerSocketChannel ch;
    private volatile int timeoutMillis;

    RdmaServerSocketAdaptor(RdmaServerSocketChannel ch) throws IOException {
        super(new NoSocketImpl());
        this.ch = ch;
    }

    @Override
    public ServerSocketChannel getChannel() {
        return ch;
    }

    @Override
    public void bind(SocketAddress local) throws IOException {
        bind(local, 50);
    }

    /** As the JDK's adaptor: the channel's state exceptions as java.net's ("Unresolved address", ...). */
    @Override
    public void bind(SocketAddress local, int backlog) throws IOException {
        try {
            ch.bind(local, backlog);
        } catch (RuntimeException e) {
            throw AdaptorExceptions.forSocket(e);
        }
    }

    @Override
    public Socket accept() throws IOException {
        if (isClosed()) {
            // The JDK's adaptor accepts through its channel, which throws this (JDK 17: its subclass
            // AsynchronousCloseException), not java.net's "Socket is closed".
            throw new java.nio.channels.ClosedChannelException();
        }
        if (!isBound()) {
            throw new SocketException("Socket is not bound yet");
        }
        int timeout = timeoutMillis;
        if (timeout > 0) {
            // Checks blocking mode itself: a timed accept needs it.
            return ch.timedAccept(TimeUnit.MILLISECONDS.toNanos(timeout)).socket();
        }
        if (ch.isBlocking()) {
            return ch.timedAccept(0).socket();
        }
        // As the JDK's adaptor: a non-blocking channel still hands over a connection that is waiting (long
        // standing behaviour that code relies on), and only when none waits is the mode illegal.
        java.nio.channels.SocketChannel sc = ch.accept();
        if (sc == null) {
            throw new IllegalBlockingModeException();
        }
        return sc.socket();
    }

    /** As the JDK's adaptor: the address stays readable after the channel is closed. */
    private InetSocketAddress local() {
        return ch.channelAddressKept();
    }

    @Override
    public InetAddress getInetAddress() {
        InetSocketAddress a = local();
        return a == null ? null : a.getAddress();
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
    public void close() throws IOException {
        ch.close();
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
    public void setSoTimeout(int timeout) throws SocketException {
        if (isClosed()) {
            throw new SocketException("Socket is closed");
        }
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout < 0");
        }
        timeoutMillis = timeout;
    }

    @Override
    public int getSoTimeout() throws IOException {
        if (isClosed()) {
            throw new SocketException("Socket is closed");
        }
        return timeoutMillis;
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        try {
            ch.setOption(StandardSocketOptions.SO_REUSEADDR, on);
        } catch (IOException e) {
            throw asSocketException(e);
        }
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        try {
            return ch.getOption(StandardSocketOptions.SO_REUSEADDR);
        } catch (IOException e) {
            throw asSocketException(e);
        }
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("size cannot be 0 or negative");
        }
        try {
            ch.setOption(StandardSocketOptions.SO_RCVBUF, size);
        } catch (IOException e) {
            throw asSocketException(e);
        }
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        try {
            return ch.getOption(StandardSocketOptions.SO_RCVBUF);
        } catch (IOException e) {
            throw asSocketException(e);
        }
    }

    /** As the JDK's adaptor: a closed channel's options are "Socket is closed". */
    private static SocketException asSocketException(IOException e) {
        return AdaptorExceptions.forSocket(e);
    }

    @Override
    public <T> ServerSocket setOption(SocketOption<T> name, T value) throws IOException {
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
    public String toString() {
        if (!isBound()) {
            return "ServerSocket[unbound]";
        }
        return "ServerSocket[addr=" + getInetAddress() + ",localport=" + getLocalPort() + "]";
    }
}
