package io.rdmanio.selector;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketImpl;

/**
 * The implementation handed to {@link java.net.Socket} and {@link java.net.ServerSocket} by the socket adaptors,
 * which override every public method and so never reach it. Each method fails naming that rule.
 */
final class NoSocketImpl extends SocketImpl {

    private static SocketException unreachable() {
        return new SocketException("a channel's socket adaptor has no SocketImpl");
    }

    @Override
    protected void create(boolean stream) throws IOException {
        throw unreachable();
    }

    @Override
    protected void connect(String host, int port) throws IOException {
        throw unreachable();
    }

    @Override
    protected void connect(InetAddress address, int port) throws IOException {
        throw unreachable();
    }

    @Override
    protected void connect(SocketAddress address, int timeout) throws IOException {
        throw unreachable();
    }

    @Override
    protected void bind(InetAddress host, int port) throws IOException {
        throw unreachable();
    }

    @Override
    protected void listen(int backlog) throws IOException {
        throw unreachable();
    }

    @Override
    protected void accept(SocketImpl s) throws IOException {
        throw unreachable();
    }

    @Override
    protected InputStream getInputStream() throws IOException {
        throw unreachable();
    }

    @Override
    protected OutputStream getOutputStream() throws IOException {
        throw unreachable();
    }

    @Override
    protected int available() throws IOException {
        throw unreachable();
    }

    @Override
    protected void close() throws IOException {
        // Nothing was opened.
    }

    @Override
    protected void sendUrgentData(int data) throws IOException {
        throw unreachable();
    }

    @Override
    public void setOption(int optID, Object value) throws SocketException {
        throw unreachable();
    }

    @Override
    public Object getOption(int optID) throws SocketException {
        throw unreachable();
    }
}
