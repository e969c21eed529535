package io.rdmanio.examples.agent;

import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A server that never accepts: listens on 127.0.0.1, prints its port, then waits (at most two minutes) until the
 * file {@code args[0]} exists and exits with its listener and the connections it holds still open, or waits to be
 * killed.
 */
public final class UnacceptingServerMain {

    private UnacceptingServerMain() {
    }

    public static void main(String[] args) throws Exception {
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        System.out.println("listening " + ((InetSocketAddress) server.getLocalAddress()).getPort());
        System.out.flush();
        Path go = Path.of(args[0]);
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (!Files.exists(go) && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
        }
        System.exit(0);
    }
}
