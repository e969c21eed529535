package io.rdmanio.examples.echo;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.zip.CRC32;

/**
 * A plain java.nio echo client: a blocking {@link SocketChannel} sends messages of random length and content and
 * checks that each comes back byte for byte; a CRC over everything sent and everything received is kept as well, so
 * a report can show both match. Knows nothing of rdmanio.
 *
 * <p>Not thread-safe: one client per thread.
 */
public final class EchoClient implements Callable<EchoClient.Result> {

    /** Largest message; within the server's buffer, so a blocking send never waits on its own echo. */
    static final int MAX_MESSAGE = 16 * 1024;

    /** What one client did. */
    public record Result(InetSocketAddress server, InetSocketAddress local, int messages, long bytes, long sentCrc,
                         long receivedCrc) {
        public boolean intact() {
            return sentCrc == receivedCrc;
        }

        @Override
        public String toString() {
            return String.format("%s -> %s: %d messages, %d bytes, crc sent %08x received %08x %s", local, server,
                    messages, bytes, sentCrc, receivedCrc, intact() ? "ok" : "MISMATCH");
        }
    }

    private final InetSocketAddress server;
    private final int messages;
    private final long seed;

    public EchoClient(InetSocketAddress server, int messages, long seed) {
        this.server = server;
        this.messages = messages;
        this.seed = seed;
    }

    /**
     * Connects, sends every message, checks every echo, closes.
     *
     * @throws IOException if the connection fails or an echo differs from what was sent (the message says where)
     */
    @Override
    public Result call() throws IOException {
        SplittableRandom random = new SplittableRandom(seed);
        CRC32 sent = new CRC32();
        CRC32 received = new CRC32();
        ByteBuffer out = ByteBuffer.allocate(MAX_MESSAGE);
        ByteBuffer in = ByteBuffer.allocate(MAX_MESSAGE);
        long bytes = 0;
        try (SocketChannel channel = SocketChannel.open(server)) {
            InetSocketAddress local = (InetSocketAddress) channel.getLocalAddress();
            for (int i = 0; i < messages; i++) {
                int length = 1 + random.nextInt(MAX_MESSAGE);
                out.clear().limit(length);
                while (out.hasRemaining()) {
                    out.put((byte) random.nextInt(256));
                }
                out.flip();
                sent.update(out.array(), 0, length);
                while (out.hasRemaining()) {
                    channel.write(out);
                }
                in.clear().limit(length);
                while (in.hasRemaining()) {
                    if (channel.read(in) < 0) {
                        throw new EOFException("echo server closed the connection in message " + i + " after "
                                + in.position() + " of " + length + " bytes");
                    }
                }
                received.update(in.array(), 0, length);
                if (!Arrays.equals(out.array(), 0, length, in.array(), 0, length)) {
                    throw new IOException("echo of message " + i + " (" + length + " bytes) differs at byte "
                            + Arrays.mismatch(out.array(), 0, length, in.array(), 0, length));
                }
                bytes += length;
            }
            channel.shutdownOutput();
            in.clear();
            if (channel.read(in) != -1) {
                throw new IOException("echo server sent bytes nobody asked for");
            }
            return new Result(server, local, messages, bytes, sent.getValue(), received.getValue());
        }
    }

    /**
     * Sends {@code COUNT} messages to {@code HOST PORT}, on each of {@code CONNECTIONS} connections at once (default
     * 1); prints one line per connection and exits 1 unless every one came back intact.
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 3 && args.length != 4) {
            System.err.println("usage: EchoClient HOST PORT COUNT [CONNECTIONS]");
            System.exit(2);
        }
        InetSocketAddress server = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        int count = Integer.parseInt(args[2]);
        int connections = args.length == 4 ? Integer.parseInt(args[3]) : 1;
        if (connections < 1) {
            System.err.println("CONNECTIONS must be at least 1: " + connections);
            System.exit(2);
        }
        ExecutorService pool = Executors.newFixedThreadPool(connections);
        List<Future<Result>> results = new ArrayList<>();
        long seed = System.nanoTime();
        for (int i = 0; i < connections; i++) {
            results.add(pool.submit(new EchoClient(server, count, seed + i)));
        }
        boolean intact = true;
        try {
            for (Future<Result> f : results) {
                Result r = f.get();
                System.out.println(r);
                intact &= r.intact();
            }
        } finally {
            pool.shutdownNow();
        }
        System.exit(intact ? 0 : 1);
    }
}
