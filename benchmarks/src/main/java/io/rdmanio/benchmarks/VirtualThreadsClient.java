package io.rdmanio.benchmarks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * The client of {@link VirtualThreadsBench}: connects T blocking channels, then runs one thread per channel (virtual
 * or platform) doing R 64-byte round trips each, every echo checked; prints {@code ELAPSED ms} from the start of
 * the first round trip to the end of the last. Plain java.nio: the JVM's flags decide the transport.
 */
public final class VirtualThreadsClient {

    private VirtualThreadsClient() {
    }

    public static void main(String[] args) throws Exception {
        InetSocketAddress server = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        int threads = Integer.parseInt(args[2]);
        int rounds = Integer.parseInt(args[3]);
        boolean virtual = args[4].equals("virtual");
        List<SocketChannel> channels = new ArrayList<>(threads);
        for (int i = 0; i < threads; i++) {
            SocketChannel ch = SocketChannel.open(server);
            ch.write(ByteBuffer.wrap(new byte[] {EchoServer.ECHO}));
            channels.add(ch);
        }
        ExecutorService pool = virtual
                ? (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null)
                : Executors.newFixedThreadPool(threads);
        long cold = timed(pool, channels, rounds, 0);
        long warm = timed(pool, channels, rounds, rounds);
        pool.shutdown();
        for (SocketChannel ch : channels) {
            ch.close();
        }
        System.out.println("COLD " + TimeUnit.NANOSECONDS.toMillis(cold));
        System.out.println("ELAPSED " + TimeUnit.NANOSECONDS.toMillis(warm));
    }

    /**
     * Every thread's round trips at once, released together; the nanoseconds from the release to the last one's end.
     * {@code first} numbers the rounds on from an earlier run on the same connections.
     */
    private static long timed(ExecutorService pool, List<SocketChannel> channels, int rounds, int first)
            throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> done = new ArrayList<>(channels.size());
        for (int i = 0; i < channels.size(); i++) {
            SocketChannel ch = channels.get(i);
            byte seed = (byte) (i + first);
            done.add(pool.submit(() -> {
                start.await();
                roundTrips(ch, rounds, seed);
                return null;
            }));
        }
        long t0 = System.nanoTime();
        start.countDown();
        for (Future<?> f : done) {
            f.get(10, TimeUnit.MINUTES);
        }
        return System.nanoTime() - t0;
    }

    private static void roundTrips(SocketChannel ch, int rounds, byte seed) throws IOException {
        ByteBuffer out = ByteBuffer.allocate(64);
        ByteBuffer in = ByteBuffer.allocate(64);
        for (int r = 0; r < rounds; r++) {
            out.clear();
            for (int k = 0; k < 64; k++) {
                out.put((byte) (seed + r + k));
            }
            out.flip();
            while (out.hasRemaining()) {
                ch.write(out);
            }
            in.clear();
            while (in.hasRemaining()) {
                if (ch.read(in) < 0) {
                    throw new IOException("end of stream after " + r + " round trips");
                }
            }
            for (int k = 0; k < 64; k++) {
                if (in.get(k) != (byte) (seed + r + k)) {
                    throw new IOException("echo differs at round " + r + ", byte " + k);
                }
            }
        }
    }
}
