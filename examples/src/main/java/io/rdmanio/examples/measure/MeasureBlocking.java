package io.rdmanio.examples.measure;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.Locale;

/**
 * Round trips between two threads that block: plain java.nio in blocking mode on both sides, one connection,
 * a 64-byte message echoed back, as a thread-per-connection server and its client do.
 * {@code MeasureBlocking server HOST PORT} prints {@code measure-blocking server listening on HOST:PORT} and echoes
 * one connection until it ends; {@code MeasureBlocking client HOST PORT SECONDS WARMUP_SECONDS} measures for
 * {@code SECONDS} after a warm-up and prints a line and {@code result rtt_p50_us=... rtt_p99_us=...
 * rtt_mean_us=...}. It knows nothing of rdmanio: the JVM it runs in decides the transport.
 */
public final class MeasureBlocking {

    private static final int SIZE = 64;
    private static final int MAX_SAMPLES = 4_000_000;

    private MeasureBlocking() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 3 && args[0].equals("server")) {
            serve(new InetSocketAddress(args[1], Integer.parseInt(args[2])));
        } else if (args.length == 5 && args[0].equals("client")) {
            measure(new InetSocketAddress(args[1], Integer.parseInt(args[2])), Long.parseLong(args[3]),
                Long.parseLong(args[4]));
        } else {
            System.err.println("usage: MeasureBlocking server HOST PORT | client HOST PORT SECONDS WARMUP_SECONDS");
            System.exit(2);
        }
    }

    private static void serve(InetSocketAddress address) throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(address)) {
            InetSocketAddress bound = (InetSocketAddress) server.getLocalAddress();
            System.out.println("measure-blocking server listening on " + address.getHostString() + ":"
                + bound.getPort());
            System.out.flush();
            try (SocketChannel c = server.accept()) {
                ByteBuffer b = ByteBuffer.allocateDirect(SIZE);
                while (readFully(c, b.clear())) {
                    writeFully(c, b.flip());
                }
            }
        }
    }

    private static void measure(InetSocketAddress address, long seconds, long warmupSeconds) throws IOException {
        long[] samples = new long[MAX_SAMPLES];
        int n = 0;
        try (SocketChannel c = SocketChannel.open(address)) {
            ByteBuffer b = ByteBuffer.allocateDirect(SIZE);
            long warm = System.nanoTime() + warmupSeconds * 1_000_000_000L;
            while (System.nanoTime() - warm < 0) {
                roundTrip(c, b);
            }
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            while (n < samples.length) {
                long t0 = System.nanoTime();
                roundTrip(c, b);
                long t1 = System.nanoTime();
                samples[n++] = t1 - t0;
                if (t1 - end >= 0) {
                    break;
                }
            }
        }
        Arrays.sort(samples, 0, n);
        long sum = 0;
        for (int i = 0; i < n; i++) {
            sum += samples[i];
        }
        double p50 = samples[n / 2] / 1e3;
        double p99 = samples[(int) (n * 0.99)] / 1e3;
        double mean = sum / 1e3 / n;
        System.out.printf(Locale.ROOT, "%d blocking round trips of %d bytes: p50 %.1f us, p99 %.1f us, mean %.1f us%n",
            n, SIZE, p50, p99, mean);
        System.out.printf(Locale.ROOT, "result rtt_p50_us=%.2f rtt_p99_us=%.2f rtt_mean_us=%.2f%n", p50, p99, mean);
    }

    private static void roundTrip(SocketChannel c, ByteBuffer b) throws IOException {
        writeFully(c, b.clear());
        if (!readFully(c, b.clear())) {
            throw new IOException("the server closed the connection");
        }
    }

    private static boolean readFully(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                return false;
            }
        }
        return true;
    }

    private static void writeFully(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            c.write(b);
        }
    }
}
