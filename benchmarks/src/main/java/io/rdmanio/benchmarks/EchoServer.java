package io.rdmanio.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Iterator;

/**
 * The server side of every benchmark: one selector thread, plain java.nio. The first byte a client sends picks
 * what the server does with the connection:
 * <ul>
 *   <li>{@code 'E'}: echo every byte back (round trips, the connection test, many connections);</li>
 *   <li>{@code 'S'}: read and discard (streams);</li>
 *   <li>{@code 'C'}: answer one byte {@code 'A'}, then read and discard until the client closes (connection
 *   setup).</li>
 * </ul>
 *
 * <p>Run as a process ({@link #main}) it prints {@code READY host:port} once bound and exits when its standard
 * input ends, so it never outlives the JVM that started it. Threading: {@link #run} is the only thread that
 * touches the channels; {@link #close} may be called from any thread.
 */
public final class EchoServer implements Runnable, AutoCloseable {
    static final byte ECHO = 'E';
    static final byte SINK = 'S';
    static final byte CONNECT = 'C';
    static final byte ACCEPTED = 'A';

    private static final int BUFFER_SIZE = 64 * 1024;

    private final Selector selector;
    private final ServerSocketChannel server;
    private final int socketBuffer;
    private volatile boolean closed;
    private Thread thread;

    /** Per connection: its mode (0 until the first byte arrives) and one buffer, reused for every message. */
    private static final class Conn {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_SIZE);
        byte mode;
    }

    /** @param socketBuffer SO_RCVBUF and SO_SNDBUF of accepted connections, or 0 to leave the defaults */
    public EchoServer(InetSocketAddress address, int socketBuffer) throws IOException {
        this.socketBuffer = socketBuffer;
        selector = Selector.open();
        server = ServerSocketChannel.open();
        if (socketBuffer > 0) {
            server.setOption(StandardSocketOptions.SO_RCVBUF, socketBuffer);
        }
        server.bind(address, 4096);
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT);
    }

    public InetSocketAddress address() throws IOException {
        return (InetSocketAddress) server.getLocalAddress();
    }

    /** Starts {@link #run} on a daemon thread. */
    public EchoServer start() {
        thread = new Thread(this, "bench-echo-server");
        thread.setDaemon(true);
        thread.start();
        return this;
    }

    @Override
    public void run() {
        try {
            while (!closed) {
                selector.select();
                Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                while (it.hasNext()) {
                    SelectionKey key = it.next();
                    it.remove();
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.isAcceptable()) {
                        implAccept();
                    } else {
                        implService(key);
                    }
                }
            }
        } catch (ClosedSelectorException e) {
            // closed from another thread
        } catch (IOException e) {
            if (!closed) {
                System.err.println("bench echo server: " + e);
            }
        }
    }

    private void implAccept() throws IOException {
        SocketChannel ch;
        while ((ch = server.accept()) != null) {
            ch.configureBlocking(false);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            if (socketBuffer > 0) {
                ch.setOption(StandardSocketOptions.SO_SNDBUF, socketBuffer);
            }
            ch.register(selector, SelectionKey.OP_READ, new Conn());
        }
    }

    private void implService(SelectionKey key) {
        SocketChannel ch = (SocketChannel) key.channel();
        Conn c = (Conn) key.attachment();
        ByteBuffer b = c.buffer;
        try {
            if (key.isWritable()) {
                // The rest of an echo that did not fit: finish it before reading more.
                ch.write(b);
                if (b.hasRemaining()) {
                    return;
                }
                b.clear();
                key.interestOps(SelectionKey.OP_READ);
            }
            if (!key.isReadable()) {
                return;
            }
            // A sink drains up to a few buffers a wakeup; echo answers each read at once.
            for (int reads = 0; reads < 16; reads++) {
                int n = ch.read(b);
                if (n < 0) {
                    implClose(key);
                    return;
                }
                if (n == 0 && b.position() == 0) {
                    return;
                }
                b.flip();
                if (c.mode == 0) {
                    c.mode = b.get();
                    if (c.mode != ECHO && c.mode != SINK && c.mode != CONNECT) {
                        throw new IOException("unknown mode byte " + c.mode);
                    }
                }
                if (c.mode == SINK) {
                    b.clear();
                    if (n == 0) {
                        return;
                    }
                    continue;
                }
                if (c.mode == CONNECT) {
                    // Answer once; the client closes first, and the end of its stream closes this side.
                    b.clear();
                    b.put(ACCEPTED).flip();
                    c.mode = SINK;
                    ch.write(b);
                    if (b.hasRemaining()) {
                        key.interestOps(SelectionKey.OP_WRITE);
                        return;
                    }
                    b.clear();
                    continue;
                }
                ch.write(b);
                if (b.hasRemaining()) {
                    b.compact().flip();
                    key.interestOps(SelectionKey.OP_WRITE);
                    return;
                }
                b.clear();
                return;
            }
        } catch (IOException e) {
            implClose(key);
        }
    }

    private static void implClose(SelectionKey key) {
        key.cancel();
        try {
            key.channel().close();
        } catch (IOException ignored) {
            // closing: nothing left to do with this connection
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        selector.wakeup();
        if (thread != null) {
            try {
                thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        server.close();
        for (SelectionKey k : selector.keys()) {
            k.channel().close();
        }
        selector.close();
    }

    /** {@code EchoServer HOST PORT [SOCKET_BUFFER]}: serves until standard input ends. */
    public static void main(String[] args) throws Exception {
        String host = args.length > 0 ? args[0] : "127.0.0.1";
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        int socketBuffer = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        EchoServer s = new EchoServer(new InetSocketAddress(host, port), socketBuffer);
        InetSocketAddress a = s.address();
        System.out.println("READY " + a.getAddress().getHostAddress() + ":" + a.getPort());
        System.out.flush();
        Thread watcher = new Thread(() -> {
            try (InputStream in = System.in) {
                while (in.read() >= 0) {
                    // the parent never writes; a byte or EOF both mean little, EOF means it is gone
                }
            } catch (IOException ignored) {
                // parent gone
            }
            System.exit(0);
        }, "bench-parent-watch");
        watcher.setDaemon(true);
        watcher.start();
        s.run();
    }
}
