package io.rdmanio.selector.shm;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * A plain java.nio server that never reads: it binds {@code 127.0.0.1:0}, says {@code PORT p}, accepts every
 * connection and holds it unread, until its stdin ends; then it exits. It knows nothing of rdmanio.
 */
public final class HoldingServerMain {

    private HoldingServerMain() {
    }

    public static void main(String[] args) throws Exception {
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        System.out.println("PORT " + ((InetSocketAddress) server.getLocalAddress()).getPort());
        System.out.flush();
        List<SocketChannel> held = new ArrayList<>();
        Thread acceptor = new Thread(() -> {
            try {
                while (true) {
                    held.add(server.accept());
                }
            } catch (IOException e) {
                System.out.println("ENDED accept " + e);
            }
        }, "holding-acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
        while (System.in.read() >= 0) {
            // until stdin ends
        }
        System.exit(0);
    }
}
