package io.rdmanio.selector.shm;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Iterator;

/**
 * An ordinary selector-driven NIO echo server, plain java.nio: binds 127.0.0.1 on an ephemeral port, prints
 * {@code PORT p}, echoes every connection until its client closes, and exits when its stdin ends.
 */
public final class EchoServerMain {

    public static void main(String[] args) throws Exception {
        Selector selector = Selector.open();
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT);
        System.out.println("PORT " + ((InetSocketAddress) server.getLocalAddress()).getPort());
        System.out.flush();
        Thread stdin = new Thread(() -> {
            try (InputStream in = System.in) {
                while (in.read() >= 0) {
                    // until the test closes our stdin
                }
            } catch (IOException e) {
                // same: stop
            }
            selector.wakeup();
        }, "stdin");
        stdin.setDaemon(true);
        stdin.start();
        long accepted = 0;
        long echoed = 0;
        while (stdin.isAlive()) {
            selector.select(1000);
            Iterator<SelectionKey> it = selector.selectedKeys().iterator();
            while (it.hasNext()) {
                SelectionKey key = it.next();
                it.remove();
                if (!key.isValid()) {
                    continue;
                }
                if (key.isAcceptable()) {
                    SocketChannel c;
                    while ((c = server.accept()) != null) {
                        c.configureBlocking(false);
                        c.register(selector, SelectionKey.OP_READ, ByteBuffer.allocate(64 * 1024));
                        accepted++;
                    }
                    continue;
                }
                SocketChannel c = (SocketChannel) key.channel();
                ByteBuffer buf = (ByteBuffer) key.attachment();
                try {
                    if (key.isReadable()) {
                        int n = c.read(buf);
                        if (n < 0) {
                            c.close();
                            continue;
                        }
                        echoed += n;
                    }
                    buf.flip();
                    c.write(buf);
                    buf.compact();
                    // Stop reading while the echo is stalled, so a slow client bounds what the server holds.
                    key.interestOps(buf.position() > 0 ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
                } catch (IOException e) {
                    System.out.println("connection failed: " + e);
                    c.close();
                }
            }
        }
        System.out.println("SERVED " + accepted + " connections, " + echoed + " bytes");
        System.out.flush();
        selector.close();
        server.close();
    }
}
