package io.rdmanio.selector;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;

/**
 * An unmodified NIO program, run in a forked JVM by {@link SystemProviderActivationTest}: it only uses the
 * java.nio factories, and prints the provider's class and {@code OK} once an echo through a selector worked.
 */
public final class ProviderSmokeMain {

    private ProviderSmokeMain() {
    }

    public static void main(String[] args) throws Exception {
        System.out.println("provider " + SelectorProvider.provider().getClass().getName());
        try (ServerSocketChannel server = ServerSocketChannel.open();
             Selector selector = Selector.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel client = SocketChannel.open(server.getLocalAddress());
                 SocketChannel accepted = server.accept()) {
                System.out.println("channel " + client.getClass().getName());
                accepted.configureBlocking(false);
                SelectionKey key = accepted.register(selector, SelectionKey.OP_READ);
                client.write(ByteBuffer.wrap("ping".getBytes("US-ASCII")));
                ByteBuffer in = ByteBuffer.allocate(4);
                for (int i = 0; i < 100 && in.hasRemaining(); i++) {
                    selector.select(1000);
                    if (selector.selectedKeys().remove(key)) {
                        accepted.read(in);
                    }
                }
                if (!"ping".equals(new String(in.array(), "US-ASCII"))) {
                    throw new AssertionError("echo failed: " + new String(in.array(), "US-ASCII"));
                }
            }
        }
        System.out.println("OK");
    }
}
