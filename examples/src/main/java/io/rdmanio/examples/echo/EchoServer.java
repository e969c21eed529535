package io.rdmanio.examples.echo;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Iterator;

/**
 * A plain java.nio echo server: one thread, one selector, non-blocking channels. Every byte read is written back
 * in order; when the peer is slower than the sender, the server stops reading until its buffer drains (OP_WRITE).
 *
 * <p>It knows nothing of rdmanio: run through it, its connections are carried by whatever the rules decide.
 * Thread-safety: {@link #run()} on one thread; {@link #close()} from any thread.
 */
public final class EchoServer implements Runnable, AutoCloseable {

    /** Bytes a connection may have read and not yet echoed; the server stops reading beyond that. */
    static final int BUFFER_SIZE = 64 * 1024;

    private final Selector selector;
    private final ServerSocketChannel server;
    private volatile boolean closed;
    private volatile Throwable failure;

    public EchoServer(InetSocketAddress bindAddress) throws IOException {
        selector = Selector.open();
        server = ServerSocketChannel.open();
        try {
            server.bind(bindAddress);
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException | RuntimeException e) {
            server.close();
            selector.close();
            throw e;
        }
    }

    /** The address the server listens on, with the port it was given. */
    public InetSocketAddress localAddress() throws IOException {
        return (InetSocketAddress) server.getLocalAddress();
    }

    /** The error that stopped the server, or {@code null}. */
    public Throwable failure() {
        return failure;
    }

    @Override
    public void run() {
        try {
            while (!closed) {
                selector.select();
                Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext()) {
                    SelectionKey key = keys.next();
                    keys.remove();
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.isAcceptable()) {
                        accept();
                    } else {
                        serve(key);
                    }
                }
            }
        } catch (ClosedSelectorException e) {
            // close() from another thread: the normal way out.
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                failure = e;
                e.printStackTrace();
            }
        }
    }

    private void accept() throws IOException {
        SocketChannel channel;
        while ((channel = server.accept()) != null) {
            channel.configureBlocking(false);
            channel.register(selector, SelectionKey.OP_READ, ByteBuffer.allocate(BUFFER_SIZE));
        }
    }

    /** Reads what fits, writes what it can; one broken client is closed without stopping the others. */
    private void serve(SelectionKey key) {
        SocketChannel channel = (SocketChannel) key.channel();
        ByteBuffer buffer = (ByteBuffer) key.attachment();
        try {
            boolean eof = false;
            if (key.isReadable() && buffer.hasRemaining()) {
                eof = channel.read(buffer) < 0;
            }
            buffer.flip();
            channel.write(buffer);
            buffer.compact();
            boolean pending = buffer.position() > 0;
            if (eof && !pending) {
                channel.close();
                return;
            }
            // After end of stream, reading again returns -1 at once: keep reading only while there is room, and
            // the next -1 with nothing pending closes the channel.
            int ops = 0;
            if (buffer.hasRemaining() && !eof) {
                ops |= SelectionKey.OP_READ;
            }
            if (pending) {
                ops |= SelectionKey.OP_WRITE;
            }
            key.interestOps(ops);
        } catch (IOException e) {
            System.err.println("echo server: closing " + key.channel() + ": " + e);
            key.cancel();
            try {
                channel.close();
            } catch (IOException ignored) {
                // Already broken; nothing more to release.
            }
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        try {
            server.close();
        } finally {
            selector.close();
        }
    }

    /** Runs a server on {@code HOST PORT} until the process is stopped. */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: EchoServer HOST PORT");
            System.exit(2);
        }
        try (EchoServer server = new EchoServer(new InetSocketAddress(args[0], Integer.parseInt(args[1])))) {
            System.out.println("echo server listening on " + server.localAddress());
            server.run();
        }
    }
}
