package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.Fabrics;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Thread per connection on one engine: 48 client threads and 48 server threads, each blocked in
 * {@link Connection#await} on its own connection, 300 request/response rounds each. A completion wakes the threads
 * of its connection and one thread that drives progress, not every thread blocked on the engine; every round must
 * still finish (a thread that is never woken is a lost wakeup), byte-exact, with and without spinning first.
 */
class ManyBlockedThreadsTest {

    private static final int PAIRS = 48;
    private static final int ROUNDS = 300;

    @ParameterizedTest(name = "spinMicros={0}")
    @ValueSource(ints = {0, 20})
    void everyBlockedThreadIsWokenForItsOwnConnection(int spinMicros) throws Exception {
        EngineConfig config = EngineConfig.DEFAULT.withSpinMicros(spinMicros);
        ExecutorService pool = Executors.newFixedThreadPool(2 * PAIRS);
        try (Fabric fabric = Fabrics.open("loopback", Map.of("loopback.seed", "11"));
             Engine engine = Engines.open(fabric, config)) {
            Listener listener = engine.listen(new InetSocketAddress("127.0.0.1", 0), 2 * PAIRS,
                ConnectionOptions.DEFAULT);
            List<Future<Long>> results = new ArrayList<>();
            for (int i = 0; i < PAIRS; i++) {
                int id = i;
                results.add(pool.submit(() -> client(engine, listener.localAddress(), id)));
            }
            for (int i = 0; i < PAIRS; i++) {
                Connection accepted = accept(listener);
                results.add(pool.submit(() -> echo(accepted)));
            }
            long total = 0;
            for (Future<Long> f : results) {
                total += f.get(120, TimeUnit.SECONDS);
            }
            assertEquals(4L * PAIRS * ROUNDS * 16, total, "every byte of every round, written and read on both sides");
            listener.close();
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
        }
    }

    private static Connection accept(Listener listener) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (Connection c; ; ) {
            if ((c = listener.accept()) != null) {
                return c;
            }
            assertTrue(System.nanoTime() - deadline < 0, "a connection was not accepted in time");
            listener.await(Readiness.ACCEPT, TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    private static long client(Engine engine, InetSocketAddress server, int id) throws IOException {
        try (Connection c = engine.connect(server, ConnectionOptions.DEFAULT)) {
            while (!c.finishConnect()) {
                c.await(Readiness.CONNECT, Long.MAX_VALUE);
            }
            ByteBuffer out = ByteBuffer.allocate(16);
            ByteBuffer in = ByteBuffer.allocate(16);
            long moved = 0;
            for (int r = 0; r < ROUNDS; r++) {
                out.clear().putLong(id).putLong(r).flip();
                moved += writeFully(c, out);
                in.clear();
                moved += readFully(c, in);
                assertEquals(id, in.getLong(0), "the echo of this connection's own request");
                assertEquals(r, in.getLong(8));
            }
            return moved;
        }
    }

    private static long echo(Connection c) throws IOException {
        try (c) {
            ByteBuffer b = ByteBuffer.allocate(16);
            long moved = 0;
            for (int r = 0; r < ROUNDS; r++) {
                b.clear();
                moved += readFully(c, b);
                b.flip();
                moved += writeFully(c, b);
            }
            return moved;
        }
    }

    private static long readFully(Connection c, ByteBuffer b) throws IOException {
        ByteBuffer[] bufs = {b};
        long n = 0;
        while (b.hasRemaining()) {
            long k = c.read(bufs, 0, 1);
            if (k < 0) {
                throw new IOException("end of stream");
            }
            n += k;
            if (b.hasRemaining() && k == 0) {
                c.await(Readiness.READ, Long.MAX_VALUE);
            }
        }
        return n;
    }

    private static long writeFully(Connection c, ByteBuffer b) throws IOException {
        ByteBuffer[] bufs = {b};
        long n = 0;
        while (b.hasRemaining()) {
            long k = c.write(bufs, 0, 1);
            n += k;
            if (b.hasRemaining() && k == 0) {
                c.await(Readiness.WRITE, Long.MAX_VALUE);
            }
        }
        return n;
    }
}
