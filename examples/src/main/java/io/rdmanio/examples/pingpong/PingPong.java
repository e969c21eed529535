package io.rdmanio.examples.pingpong;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;

/**
 * A bounded ping-pong over one TCP connection on 127.0.0.1: {@code PingPong [ROUNDS] [SIZE]}. The echo side waits in
 * a Selector (as an event-loop server does), the client in blocking reads. Prints the provider and the mean round
 * trip after a warm-up. Run it once plainly and once with the rdmanio agent and no rules to see what rdmanio adds
 * to a TCP connection.
 */
public final class PingPong {

    private PingPong() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int size = args.length > 1 ? Integer.parseInt(args[1]) : 64;
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            Thread echo = new Thread(() -> echo(server, size), "echo");
            echo.setDaemon(true);
            echo.start();
            try (SocketChannel c = SocketChannel.open(server.getLocalAddress())) {
                c.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
                ByteBuffer b = ByteBuffer.allocateDirect(size);
                run(c, b, rounds / 4);
                long t0 = System.nanoTime();
                run(c, b, rounds);
                long ns = System.nanoTime() - t0;
                System.out.printf("provider %s: %d round trips of %d bytes, %.2f us each%n",
                        SelectorProvider.provider().getClass().getSimpleName(), rounds, size, ns / 1000.0 / rounds);
            }
        }
    }

    private static void run(SocketChannel c, ByteBuffer b, int rounds) throws IOException {
        for (int i = 0; i < rounds; i++) {
            b.clear();
            while (b.hasRemaining()) {
                c.write(b);
            }
            b.clear();
            while (b.hasRemaining()) {
                if (c.read(b) < 0) {
                    throw new IOException("echo side closed");
                }
            }
        }
    }

    private static void echo(ServerSocketChannel server, int size) {
        try (SocketChannel a = server.accept(); Selector sel = Selector.open()) {
            a.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
            a.configureBlocking(false);
            a.register(sel, SelectionKey.OP_READ);
            ByteBuffer b = ByteBuffer.allocateDirect(size);
            for (;;) {
                sel.select();
                sel.selectedKeys().clear();
                int n = a.read(b);
                if (n < 0) {
                    return;
                }
                if (!b.hasRemaining()) {
                    b.flip();
                    while (b.hasRemaining()) {
                        a.write(b);
                    }
                    b.clear();
                }
            }
        } catch (IOException e) {
            // The client closed: the run is over.
        }
    }
}
