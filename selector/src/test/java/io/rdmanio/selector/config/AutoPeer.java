package io.rdmanio.selector.config;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * A plain NIO program for the namespace test: it knows nothing of rdmanio, which the JVM's provider property
 * switches on (or not).
 *
 * <pre>
 *   server PORT        an echo server of one byte per connection; prints READY, then ACCEPTED CHANNEL per client
 *   client             reads HOST:PORT lines; connects, echoes a byte, prints CONNECTED HOST:PORT MICROS CHANNEL
 * </pre>
 * Either ends at end of input or on the line {@code quit}.
 */
public final class AutoPeer {

    private AutoPeer() {
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        if (args[0].equals("server")) {
            ServerSocketChannel server = ServerSocketChannel.open();
            server.bind(new InetSocketAddress(Integer.parseInt(args[1])));
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        try (SocketChannel c = server.accept()) {
                            ByteBuffer one = ByteBuffer.allocate(1);
                            while (one.hasRemaining() && c.read(one) >= 0) {
                                // read the byte
                            }
                            one.flip();
                            c.write(one);
                            System.out.println("ACCEPTED " + c);
                        }
                    }
                } catch (IOException e) {
                    System.out.println("SERVER STOPPED " + e);
                }
            }, "acceptor");
            acceptor.setDaemon(true);
            acceptor.start();
            System.out.println("READY " + server);
            String line;
            while ((line = in.readLine()) != null && !line.equals("quit")) {
                // wait
            }
            server.close();
            return;
        }
        System.out.println("READY client");
        String line;
        while ((line = in.readLine()) != null && !line.equals("quit")) {
            int colon = line.lastIndexOf(':');
            InetSocketAddress to = new InetSocketAddress(line.substring(0, colon),
                Integer.parseInt(line.substring(colon + 1)));
            long start = System.nanoTime();
            try (SocketChannel c = SocketChannel.open()) {
                c.connect(to);
                long micros = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start);
                c.write(ByteBuffer.wrap(new byte[] {7}));
                ByteBuffer one = ByteBuffer.allocate(1);
                while (one.hasRemaining() && c.read(one) >= 0) {
                    // read the echo
                }
                System.out.println("CONNECTED " + line + " " + micros + " " + (one.get(0) == 7 ? "" : "BAD ECHO ")
                    + c);
            } catch (IOException e) {
                System.out.println("CONNECTED " + line + " FAILED " + e);
            }
        }
    }
}
