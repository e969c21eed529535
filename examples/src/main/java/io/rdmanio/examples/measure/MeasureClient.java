package io.rdmanio.examples.measure;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.Locale;

/**
 * Measures what an ordinary NIO client sees of a connection to {@link MeasureServer}:
 * {@code MeasureClient HOST PORT [SECONDS [WARMUP_SECONDS]]}. The round trips are measured for {@code SECONDS}
 * (default 2) after a warm-up of {@code WARMUP_SECONDS} (default 4), so that both transports are measured with their code compiled by the JIT's optimizing
 * tier (on a 2-core machine rdmanio's path reached it after 2-4 s; until then its round trips took 3-10 times as
 * long), and separately over the connection's first second, which is what a freshly started program sees. The
 * stream runs for {@code SECONDS} after a one-second warm-up of its own.
 *
 * <ul>
 *   <li>round trips of 64 bytes, selector-driven as an event loop writes them (write, select, read), each echo
 *       checked byte for byte;</li>
 *   <li>a stream written in 1 MiB blocking writes, timed until the server has read every byte (it answers the count
 *       once the client shuts its output down).</li>
 * </ul>
 * Prints a line per measurement and one line for scripts:
 * {@code result rtt_p50_us=.. rtt_p99_us=.. rtt_mean_us=.. stream_mb_s=.. rtt_cold_p50_us=..}. Exits 1 if a byte came back wrong.
 */
public final class MeasureClient {

    private static final int MESSAGE = 64;
    private static final int WRITE = 1 << 20;
    private static final long WARMUP_NANOS = 1_000_000_000L;
    /** The first part of the round trips, measured on its own as what a program just started sees. */
    private static final long COLD_NANOS = 1_000_000_000L;
    /** Round-trip times kept at most (the measurement stops early when they are all used). */
    private static final int MAX_SAMPLES = 4 << 20;

    private MeasureClient() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 2 || args.length > 4) {
            System.err.println("usage: MeasureClient HOST PORT [SECONDS [WARMUP_SECONDS]]");
            System.exit(2);
        }
        InetSocketAddress server = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        double seconds = args.length > 2 ? Double.parseDouble(args[2]) : 2;
        if (!(seconds > 0 && seconds <= 600)) {
            System.err.println("SECONDS must be more than 0 and at most 600: " + args[2]);
            System.exit(2);
        }
        long nanos = (long) (seconds * 1e9);
        double warmup = args.length > 3 ? Double.parseDouble(args[3]) : 4;
        if (!(warmup >= 0 && warmup <= 600)) {
            System.err.println("WARMUP_SECONDS must be at least 0 and at most 600: " + args[3]);
            System.exit(2);
        }
        double[] cold = new double[1];
        long[] rtt = roundTrips(server, (long) (warmup * 1e9), nanos, cold);
        Arrays.sort(rtt);
        double mean = Arrays.stream(rtt).average().orElse(0) / 1000.0;
        double p50 = rtt[rtt.length / 2] / 1000.0;
        double p99 = rtt[(int) Math.min(rtt.length - 1, Math.round(rtt.length * 0.99))] / 1000.0;
        System.out.printf(Locale.ROOT, "%d round trips of %d bytes: p50 %.1f us, p99 %.1f us, mean %.1f us"
                + " (the connection's first second: p50 %.1f us)%n", rtt.length, MESSAGE, p50, p99, mean, cold[0]);
        stream(server, WARMUP_NANOS);
        double[] mbs = new double[1];
        long mib = stream(server, nanos, mbs);
        System.out.printf(Locale.ROOT, "stream of %d MiB in 1 MiB writes: %.0f MB/s%n", mib, mbs[0]);
        System.out.printf(Locale.ROOT, "result rtt_p50_us=%.2f rtt_p99_us=%.2f rtt_mean_us=%.2f stream_mb_s=%.0f"
                + " rtt_cold_p50_us=%.2f%n", p50, p99, mean, mbs[0], cold[0]);
    }

    /**
     * The times in nanoseconds of the round trips made in {@code nanos} after {@code warmupNanos}; the median in
     * microseconds of those made in the connection's first second in {@code coldP50}.
     */
    private static long[] roundTrips(InetSocketAddress server, long warmupNanos, long nanos, double[] coldP50)
            throws IOException {
        try (SocketChannel ch = SocketChannel.open(server); Selector selector = Selector.open()) {
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ch.write(ByteBuffer.wrap(new byte[] {MeasureServer.ECHO}));
            ch.configureBlocking(false);
            SelectionKey key = ch.register(selector, SelectionKey.OP_READ);
            ByteBuffer out = ByteBuffer.allocateDirect(MESSAGE);
            ByteBuffer in = ByteBuffer.allocateDirect(MESSAGE);
            long[] times = new long[MAX_SAMPLES];
            int n = 0;
            long start = System.nanoTime();
            long measureFrom = start + warmupNanos;
            long coldUntil = start + COLD_NANOS;
            long[] coldTimes = new long[1 << 20];
            int cold = 0;
            long end = measureFrom + nanos;
            for (int i = 0; n < times.length; i++) {
                for (int j = 0; j < MESSAGE; j++) {
                    out.put(j, (byte) (i + j));
                }
                long t0 = System.nanoTime();
                out.clear();
                in.clear();
                ch.write(out);
                while (in.hasRemaining()) {
                    int ops = out.hasRemaining() ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ;
                    if (key.interestOps() != ops) {
                        key.interestOps(ops);
                    }
                    selector.select();
                    selector.selectedKeys().clear();
                    if (out.hasRemaining()) {
                        ch.write(out);
                    }
                    if (ch.read(in) < 0) {
                        throw new EOFException("the server closed the connection");
                    }
                }
                long t = System.nanoTime() - t0;
                if (in.flip().compareTo(out.flip()) != 0) {
                    System.err.println("round trip " + i + ": the echo differs from what was sent");
                    System.exit(1);
                }
                long now = t0 + t;
                if (now - end >= 0) {
                    break;
                }
                if (now - measureFrom >= 0) {
                    times[n++] = t;
                } else if (now - coldUntil < 0 && cold < coldTimes.length) {
                    coldTimes[cold++] = t;
                }
            }
            Arrays.sort(coldTimes, 0, cold);
            coldP50[0] = cold == 0 ? 0 : coldTimes[cold / 2] / 1000.0;
            return Arrays.copyOf(times, n);
        }
    }

    /** Streams for {@code nanos}; the MiB written, with MB/s (until the server counted every byte) in {@code mbs}. */
    private static long stream(InetSocketAddress server, long nanos, double[] mbs) throws IOException {
        try (SocketChannel ch = SocketChannel.open(server)) {
            ch.write(ByteBuffer.wrap(new byte[] {MeasureServer.SINK}));
            ByteBuffer out = ByteBuffer.allocateDirect(WRITE);
            for (int i = 0; i < WRITE; i++) {
                out.put(i, (byte) (i * 31));
            }
            long t0 = System.nanoTime();
            long mib = 0;
            for (; System.nanoTime() - t0 < nanos; mib++) {
                out.clear();
                while (out.hasRemaining()) {
                    ch.write(out);
                }
            }
            ch.shutdownOutput();
            ByteBuffer answer = ByteBuffer.allocate(Long.BYTES);
            while (answer.hasRemaining()) {
                if (ch.read(answer) < 0) {
                    throw new EOFException("the server closed the stream before answering its byte count");
                }
            }
            long ns = System.nanoTime() - t0;
            long counted = answer.flip().getLong();
            long sent = mib * WRITE;
            if (counted != sent) {
                System.err.println("stream: the server counted " + counted + " bytes, " + sent + " were sent");
                System.exit(1);
            }
            mbs[0] = sent / (ns / 1e9) / 1e6;
            return mib;
        }
    }

    private static void stream(InetSocketAddress server, long nanos) throws IOException {
        stream(server, nanos, new double[1]);
    }
}
