package io.rdmanio.benchmarks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * The program whose whole life {@code bench.sh --startup} times, with and without the agent: prints a line and
 * exits; with the argument {@code socket} it first sends the line through a connection to itself on 127.0.0.1
 * (routed to the fabric when the rules say so), so that the routed path's start-up is counted too.
 */
public final class StartupHello {

    private StartupHello() {
    }

    public static void main(String[] args) throws IOException {
        byte[] line = "hello".getBytes(StandardCharsets.US_ASCII);
        if (args.length > 0 && args[0].equals("socket")) {
            try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
                 SocketChannel client = SocketChannel.open(server.getLocalAddress());
                 SocketChannel accepted = server.accept()) {
                client.write(ByteBuffer.wrap(line));
                ByteBuffer in = ByteBuffer.allocate(line.length);
                while (in.hasRemaining()) {
                    if (accepted.read(in) < 0) {
                        throw new IOException("end of stream after " + in.position() + " bytes");
                    }
                }
                line = in.array();
            }
        }
        System.out.println(new String(line, StandardCharsets.US_ASCII));
    }
}
