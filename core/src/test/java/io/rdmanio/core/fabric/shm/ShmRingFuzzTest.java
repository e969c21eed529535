package io.rdmanio.core.fabric.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Listener;
import io.rdmanio.core.engine.Readiness;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Ring fields fuzzed under live connections: the connection engine on two shm fabrics of this JVM, an echo server on
 * one, and on the other a healthy connection and, round after round, a victim connection one of whose ring fields
 * (header, counters, hinted flags, ready-map names, receive and completion entries of either direction) is
 * overwritten with a chosen value while it echoes. The victim then echoes byte-exact or fails with an IOException, each exchange within a bound;
 * nothing hangs, nothing else fails, and the healthy connection echoes byte-exact throughout.
 *
 * <p>Seeded and reproducible: the seed is printed and named in every failure; {@code -Drdmanio.fuzz.seed=N}
 * replays it, {@code -Drdmanio.fuzz.rounds=N} runs longer.
 */
class ShmRingFuzzTest extends WithShmEngines {

    private static final int ROUNDS = Integer.getInteger("rdmanio.fuzz.rounds", 30);
    private static final long EXCHANGE_BOUND_NANOS = TimeUnit.SECONDS.toNanos(10);

    private Listener listener;
    private Thread acceptor;
    private final List<Thread> echoers = new ArrayList<>();
    private volatile boolean done;

    @BeforeEach
    void listen() throws IOException {
        listener = server.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8,
            ConnectionOptions.DEFAULT);
        acceptor = new Thread(this::acceptLoop, "fuzz-acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    @AfterEach
    void stopEchoing() throws Exception {
        done = true;
        acceptor.join(10_000);
        for (Thread t : echoers) {
            t.join(10_000);
        }
    }

    private void acceptLoop() {
        try {
            while (!done) {
                listener.await(Readiness.ACCEPT, 50_000_000L);
                Connection c = listener.accept();
                if (c != null) {
                    Thread t = new Thread(() -> echoLoop(c), "fuzz-echo");
                    t.setDaemon(true);
                    synchronized (echoers) {
                        echoers.add(t);
                    }
                    t.start();
                }
            }
        } catch (IOException e) {
            // the engine closed
        }
    }

    /** Echoes until end of stream or a failure (which the client side judges). */
    private void echoLoop(Connection c) {
        ByteBuffer[] buf = {ByteBuffer.allocate(1 << 16)};
        try {
            while (!done) {
                long n = buf[0].hasRemaining() ? c.read(buf, 0, 1) : 0;
                if (n < 0) {
                    break;
                }
                buf[0].flip();
                c.write(buf, 0, 1);
                buf[0].compact();
                if (n == 0) {
                    c.await(Readiness.READ | (buf[0].position() > 0 ? Readiness.WRITE : 0), 20_000_000L);
                }
            }
        } catch (IOException e) {
            // the victim's failure, seen from this side
        } finally {
            c.close();
        }
    }

    @Test
    void aFuzzedRingFieldFailsItsConnectionOrChangesNothing() throws Exception {
        long seed = Long.getLong("rdmanio.fuzz.seed", System.nanoTime());
        System.out.println("shm ring fuzz seed " + seed + " (replay with -Drdmanio.fuzz.seed=" + seed + ")");
        Random random = new Random(seed);
        Connection healthy = connect();
        int failed = 0;
        for (int round = 0; round < ROUNDS; round++) {
            Set<ShmQueuePair> before = new HashSet<>(Arrays.asList(clientFabric.liveQueuePairs()));
            Connection victim = connect();
            ShmQueuePair qp = null;
            for (ShmQueuePair q : clientFabric.liveQueuePairs()) {
                if (!before.contains(q)) {
                    qp = q;
                }
            }
            String where = "seed " + seed + " round " + round;
            exchange(victim, random, where + " before the fuzz", false);
            String what = corrupt(qp.rings(), random);
            where += " after " + what;
            boolean ok = true;
            for (int i = 0; i < 3 && ok; i++) {
                ok = exchange(victim, random, where, true);
                exchange(healthy, random, where + " (the healthy connection)", false);
            }
            failed += ok ? 0 : 1;
            victim.close();
        }
        System.out.println("shm ring fuzz: " + failed + " of " + ROUNDS + " fuzzed connections failed with an"
            + " IOException, the others echoed byte-exact");
        healthy.close();
    }

    /** Overwrites one ring field with a chosen value; returns what it did. */
    private static String corrupt(ByteBuffer ring, Random random) {
        int cap0 = ring.getInt(ShmRingsDescriptor.CAPACITY_OFFSET);
        int cap1 = ring.getInt(ShmRingsDescriptor.CAPACITY_OFFSET + 4);
        int side = random.nextInt(2);
        int cap = side == 0 ? cap0 : cap1;
        int rq = ShmRingsDescriptor.recvQueueOffset(side, cap0, cap1);
        int cq = ShmRingsDescriptor.completionQueueOffset(side, cap0, cap1);
        long taken = ring.getLong(rq + ShmRingsDescriptor.RECV_TAKEN_OFFSET) & ~ShmRingsDescriptor.CLOSED;
        // Mostly the entries in use now (the next one to take or complete), sometimes any.
        long seq = random.nextInt(3) > 0 ? taken - 1 + random.nextInt(3) : random.nextInt(cap);
        int re = ShmRingsDescriptor.recvEntry(rq, cap, Math.max(0, seq));
        int ce = ShmRingsDescriptor.completionEntry(cq, cap, Math.max(0, seq));
        String[] names = {"magic", "version", "nonce", "capacity0", "capacity1", "taken", "hinted", "readyRkey",
            "readyIndex", "closedInOrder", "recv.seq", "recv.wrId", "recv.rkey", "recv.offset", "recv.length",
            "cqe.seq", "cqe.status", "cqe.opcode", "cqe.byteLen"};
        int[] offsets = {ShmRingsDescriptor.MAGIC_OFFSET, ShmRingsDescriptor.VERSION_OFFSET,
            ShmRingsDescriptor.NONCE_OFFSET, ShmRingsDescriptor.CAPACITY_OFFSET, ShmRingsDescriptor.CAPACITY_OFFSET + 4,
            rq + ShmRingsDescriptor.RECV_TAKEN_OFFSET, cq + ShmRingsDescriptor.CQ_HINTED_OFFSET,
            cq + ShmRingsDescriptor.CQ_READY_RKEY_OFFSET, cq + ShmRingsDescriptor.CQ_READY_INDEX_OFFSET,
            rq + ShmRingsDescriptor.RECV_CLOSED_IN_ORDER_OFFSET, re + ShmRingsDescriptor.RECV_SEQ,
            re + ShmRingsDescriptor.RECV_WR_ID, re + ShmRingsDescriptor.RECV_RKEY,
            re + ShmRingsDescriptor.RECV_OFFSET, re + ShmRingsDescriptor.RECV_LENGTH, ce + ShmRingsDescriptor.CQE_SEQ,
            ce + ShmRingsDescriptor.CQE_STATUS, ce + ShmRingsDescriptor.CQE_OPCODE,
            ce + ShmRingsDescriptor.CQE_BYTE_LEN};
        boolean[] wide = {false, false, true, false, false, true, false, false, false, false, true, true, false, false,
            false, true, false, false, false};
        int f = random.nextInt(names.length);
        long old = wide[f] ? ring.getLong(offsets[f]) : ring.getInt(offsets[f]);
        long value;
        switch (random.nextInt(7)) {
            case 0: value = 0; break;
            case 1: value = -1; break;
            case 2: value = old + 1; break;
            case 3: value = old - 1; break;
            case 4: value = old + cap; break;
            case 5: value = old ^ (1L << random.nextInt(wide[f] ? 64 : 32)); break;
            default: value = random.nextLong(); break;
        }
        if (wide[f]) {
            ShmRingsDescriptor.LONG.setVolatile(ring, offsets[f], value);
        } else {
            ShmRingsDescriptor.INT.setVolatile(ring, offsets[f], (int) value);
        }
        return "side " + side + " " + names[f] + (f >= 10 ? "[" + (Math.max(0, seq) & (cap - 1)) + "]" : "") + " "
            + old + " -> " + (wide[f] ? value : (int) value);
    }

    private Connection connect() throws IOException {
        Connection c = client.connect(listener.localAddress(), ConnectionOptions.DEFAULT);
        long deadline = System.nanoTime() + ShmTestSupport.TIMEOUT_NANOS;
        while (!c.finishConnect()) {
            if (System.nanoTime() - deadline > 0) {
                fail("connect did not finish");
            }
            c.await(Readiness.CONNECT, 20_000_000L);
        }
        return c;
    }

    /**
     * Sends a random message and reads its echo within the bound: true when echoed byte-exact, false when the
     * connection failed with an IOException (allowed only when {@code mayFail}).
     */
    private static boolean exchange(Connection c, Random random, String where, boolean mayFail) {
        byte[] sent = new byte[1 + random.nextInt(random.nextBoolean() ? 200 : 300_000)];
        random.nextBytes(sent);
        ByteBuffer[] out = {ByteBuffer.wrap(sent)};
        ByteBuffer[] in = {ByteBuffer.allocate(sent.length)};
        long deadline = System.nanoTime() + EXCHANGE_BOUND_NANOS;
        try {
            while (in[0].hasRemaining()) {
                if (System.nanoTime() - deadline > 0) {
                    fail(where + ": neither the echo nor an error within the bound (" + in[0].position() + " of "
                        + sent.length + " bytes back)");
                }
                if (out[0].hasRemaining()) {
                    c.write(out, 0, 1);
                }
                if (c.read(in, 0, 1) < 0) {
                    fail(where + ": end of stream instead of an echo or an error");
                }
                if (in[0].hasRemaining()) {
                    c.await(Readiness.READ | (out[0].hasRemaining() ? Readiness.WRITE : 0), 10_000_000L);
                }
            }
        } catch (IOException e) {
            if (!mayFail) {
                throw new AssertionError(where + ": " + e, e);
            }
            return false;
        }
        assertArrayEquals(sent, in[0].array(), where + ": the echo differs");
        return true;
    }
}
