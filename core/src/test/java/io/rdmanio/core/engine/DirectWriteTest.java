package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Connection#writeDirect}, a blocking writer's write: it waits a moment for credit instead of staging, but
 * takes exactly what a plain write takes from a peer that does not read, never reorders a byte, and never
 * deadlocks two sides that write before they read.
 */
class DirectWriteTest {

    private static final int SLOT = 4096;

    /** Writes {@code out} into {@code c} until two attempts in a row take nothing; returns the bytes taken. */
    private static long fill(Connection c, Streams out, boolean direct) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(SLOT * 5 + 123);
        for (int empty = 0; empty < 2; ) {
            empty = out.write(c, buf, buf.capacity(), direct) == 0 ? empty + 1 : 0;
        }
        return out.written;
    }

    @ParameterizedTest(name = "inline={0}")
    @ValueSource(booleans = {false, true})
    void aPeerThatDoesNotReadGetsWhatAPlainWriteWouldGive(boolean inline) throws IOException {
        EngineConfig config = EngineConfig.DEFAULT.withSlotSize(SLOT).withRingDepth(4).withSpinMicros(200);
        long plain;
        try (Pair p = new Pair(config, 7, inline)) {
            plain = fill(p.connect()[0], new Streams(1L << 30, 5), false);
        }
        try (Pair p = new Pair(config, 7, inline)) {
            FabricConnection[] cs = p.connect();
            Streams s = new Streams(1L << 30, 5);
            long direct = fill(cs[0], s, true);
            assertEquals(plain, direct, "bytes a non-reading peer's connection takes: the receive ring and staging");
            assertTrue(direct > 4L * SLOT, "more than the receive ring alone: " + direct);
            // Every one of them arrives, in order, checked byte by byte.
            s.endHere();
            ByteBuffer in = ByteBuffer.allocate(SLOT);
            p.await("every byte written", () -> {
                try {
                    s.read(cs[1], in, in.capacity());
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
                return s.readerDone();
            });
            s.assertChecksumsMatch();
        }
    }

    @Test
    void twoSidesThatWriteLargeBeforeTheyReadDoNotDeadlockAndLoseNothing() throws Exception {
        EngineConfig config = EngineConfig.DEFAULT.withSlotSize(SLOT).withRingDepth(2).withSpinMicros(20);
        try (Pair p = new Pair(config, 11, true)) {
            FabricConnection[] cs = p.connect();
            Streams ab = new Streams(4L << 20, 1);
            Streams ba = new Streams(4L << 20, 2);
            Thread[] sides = new Thread[2];
            Throwable[] errors = new Throwable[2];
            for (int s = 0; s < 2; s++) {
                int side = s;
                sides[s] = new Thread(() -> {
                    try {
                        Connection me = cs[side];
                        Streams out = side == 0 ? ab : ba;
                        Streams in = side == 0 ? ba : ab;
                        ByteBuffer wbuf = ByteBuffer.allocateDirect(SLOT * 6);
                        ByteBuffer rbuf = ByteBuffer.allocate(SLOT * 3);
                        Random r = new Random(side);
                        while (!out.writerDone() || !in.readerDone()) {
                            boolean moved = false;
                            if (!out.writerDone()) {
                                // Mostly a slot or more, the writes that wait for credit; some small ones between.
                                int max = r.nextInt(4) == 0 ? 200 : SLOT * 6;
                                moved |= out.write(me, wbuf, Streams.size(r, max), true) > 0;
                            }
                            moved |= in.read(me, rbuf, rbuf.capacity()) > 0;
                            if (!moved) {
                                int ops = (out.writerDone() ? 0 : Readiness.WRITE) | Readiness.READ;
                                me.await(ops, 10_000_000_000L);
                            }
                        }
                        me.shutdownOutput();
                        rbuf.clear();
                        while (me.read(new ByteBuffer[] {rbuf}, 0, 1) != -1) {
                            me.await(Readiness.READ, 10_000_000_000L);
                        }
                    } catch (Throwable t) {
                        errors[side] = t;
                    }
                }, "direct-side-" + s);
                sides[s].start();
            }
            for (Thread t : sides) {
                t.join(60_000);
                for (Throwable e : errors) {
                    if (e != null) {
                        throw new AssertionError("a side failed", e);
                    }
                }
                assertFalse(t.isAlive(), "deadlock: " + t.getName() + " still running; " + cs[0].creditState()
                    + " | " + cs[1].creditState());
            }
            ab.assertChecksumsMatch();
            ba.assertChecksumsMatch();
            assertEquals(0, p.fabric.receiverNotReadyCount(), "receiver-not-ready on the fabric");
        }
    }
}
