package io.rdmanio.examples.measure;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Iterator;

/**
 * The server side of {@link MeasureClient}, plain java.nio on one selector thread:
 * {@code MeasureServer HOST PORT} (port 0 picks one). Prints {@code measure server listening on HOST:PORT}.
 *
 * <p>The first byte a client sends picks what the connection does: {@code 'E'} echoes every byte back, {@code 'S'}
 * reads and counts every byte until the client shuts its output down, then answers with the count (8 bytes, big
 * endian) and closes. Runs until it is killed.
 */
public final class MeasureServer {

    static final byte ECHO = 'E';
    static final byte SINK = 'S';

    private MeasureServer() {
    }

    /** Per connection: its mode (0 until the first byte), its buffer and, for a sink, the byte count. */
    private static final class Conn {
        byte mode;
        final ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
        long count;
        ByteBuffer answer;
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: MeasureServer HOST PORT");
            System.exit(2);
        }
        try (Selector selector = Selector.open(); ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getByName(args[0]), Integer.parseInt(args[1])));
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            InetSocketAddress bound = (InetSocketAddress) server.getLocalAddress();
            System.out.println("measure server listening on " + bound.getAddress().getHostAddress() + ":"
                    + bound.getPort());
            System.out.flush();
            for (;;) {
                selector.select();
                for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext();) {
                    SelectionKey key = it.next();
                    it.remove();
                    try {
                        if (key.isAcceptable()) {
                            SocketChannel c = server.accept();
                            if (c != null) {
                                c.configureBlocking(false);
                                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                                c.register(selector, SelectionKey.OP_READ, new Conn());
                            }
                        } else {
                            serve(key);
                        }
                    } catch (IOException e) {
                        // One client's failure is that client's: report it and serve the others.
                        System.err.println("measure server: a connection failed: " + e);
                        key.channel().close();
                    }
                }
            }
        }
    }

    private static void serve(SelectionKey key) throws IOException {
        SocketChannel c = (SocketChannel) key.channel();
        Conn conn = (Conn) key.attachment();
        if (conn.answer != null) {
            c.write(conn.answer);
            if (!conn.answer.hasRemaining()) {
                c.close();
            }
            return;
        }
        ByteBuffer b = conn.buf;
        int n = c.read(b);
        if (n < 0) {
            finish(key, c, conn);
            return;
        }
        b.flip();
        if (conn.mode == 0 && b.hasRemaining()) {
            conn.mode = b.get();
            if (conn.mode != ECHO && conn.mode != SINK) {
                throw new IOException("unknown mode byte " + conn.mode + " (expected 'E' or 'S')");
            }
        }
        if (conn.mode == SINK) {
            conn.count += b.remaining();
            b.clear();
            return;
        }
        c.write(b);
        b.compact();
        // Whatever the peer's window did not take waits for OP_WRITE; reading stops until it is out.
        key.interestOps(b.position() > 0 ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
    }

    private static void finish(SelectionKey key, SocketChannel c, Conn conn) throws IOException {
        if (conn.mode != SINK) {
            c.close();
            return;
        }
        conn.answer = ByteBuffer.allocate(Long.BYTES).putLong(conn.count).flip();
        c.write(conn.answer);
        if (conn.answer.hasRemaining()) {
            key.interestOps(SelectionKey.OP_WRITE);
        } else {
            c.close();
        }
    }
}
