package io.rdmanio.core.engine;

import static io.rdmanio.core.engine.Pair.read;
import static io.rdmanio.core.engine.Pair.write;
import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The credit protocol under load: no receiver-not-ready ever, no deadlock at any ring depth, little credit-only
 * traffic, and silence when nobody reads.
 */
class FlowControlTest {

    /** One connection and a stream each way, driven in random steps by the test thread. */
    private static final class Duplex {
        final FabricConnection a;
        final FabricConnection b;
        final Streams ab;
        final Streams ba;
        final ByteBuffer bufA;
        final ByteBuffer bufB;
        final int maxWrite;

        Duplex(FabricConnection[] cs, long bytes, int seed, int maxWrite, boolean direct) {
            a = cs[0];
            b = cs[1];
            ab = new Streams(bytes, seed);
            ba = new Streams(bytes, seed + 1);
            this.maxWrite = maxWrite;
            bufA = direct ? ByteBuffer.allocateDirect(maxWrite) : ByteBuffer.allocate(maxWrite);
            bufB = direct ? ByteBuffer.allocateDirect(maxWrite) : ByteBuffer.allocate(maxWrite);
        }

        /** One random step; returns whether anything moved. */
        boolean step(Random r) throws IOException {
            switch (r.nextInt(4)) {
                case 0:
                    return ab.write(a, bufA, Streams.size(r, maxWrite)) > 0;
                case 1:
                    return ba.write(b, bufB, Streams.size(r, maxWrite)) > 0;
                case 2:
                    return ab.read(b, bufB, Streams.size(r, maxWrite)) > 0;
                default:
                    return ba.read(a, bufA, Streams.size(r, maxWrite)) > 0;
            }
        }

        boolean done() {
            return ab.readerDone() && ba.readerDone();
        }
    }

    private static void assertNoReceiverNotReady(Pair p) {
        assertEquals(0, p.fabric.receiverNotReadyCount(), "receiver-not-ready on the fabric");
        assertEquals(0, p.client.stats().receiverNotReady());
        assertEquals(0, p.server.stats().receiverNotReady());
    }

    private static boolean inlineFramesUsed(Pair p) {
        return p.client.stats().inlineFramesSent() > 0 && p.server.stats().inlineFramesSent() > 0;
    }

    private static long frames(Pair p) {
        return p.client.stats().framesSent() + p.server.stats().framesSent();
    }

    /** Runs until every stream is read in full; fails on timeout. Releases held completions when stuck. */
    private static void run(Pair p, Duplex[] ds, Random r, long frameTarget) throws IOException {
        long deadline = System.nanoTime() + 120_000_000_000L;
        int idle = 0;
        boolean stopped = false;
        for (;;) {
            boolean allDone = true;
            for (Duplex d : ds) {
                allDone &= d.done();
            }
            if (allDone) {
                return;
            }
            if (!stopped && frames(p) >= frameTarget) {
                // Enough frames: end every stream where it is and drain what is in flight.
                stopped = true;
                for (Duplex d : ds) {
                    d.ab.endHere();
                    d.ba.endHere();
                }
            }
            boolean moved = false;
            for (int k = 0; k < 12; k++) {
                moved |= ds[r.nextInt(ds.length)].step(r);
            }
            moved |= p.pump() > 0;
            idle = moved ? 0 : idle + 1;
            if (idle > 64) {
                // Batched or held completions wait for more posts; everything posted is released eventually.
                p.fabric.faults().releaseAll();
                idle = 0;
            }
            if (System.nanoTime() - deadline > 0) {
                StringBuilder sb = new StringBuilder("stuck after " + frames(p) + " frames:");
                for (Duplex d : ds) {
                    sb.append("\n  ").append(d.ab.written).append('/').append(d.ab.read).append(' ')
                        .append(d.ba.written).append('/').append(d.ba.read).append(' ').append(d.a.creditState())
                        .append(" | ").append(d.b.creditState());
                }
                fail(sb.toString());
            }
        }
    }

    /** Both ways of sending a data frame: staged in registered memory, and inline from the writer's buffer. */
    @ParameterizedTest(name = "inline={0}")
    @ValueSource(booleans = {false, true})
    void noReceiverNotReadyOverAMillionFramesWithDelayedAndBatchedCompletions(boolean inline) throws Exception {
        EngineConfig config = EngineConfig.DEFAULT.withSlotSize(256).withRingDepth(4);
        try (Pair p = new Pair(config, 7, inline)) {
            Random r = new Random(7);
            int[] depths = {1, 2, 3, 5};
            Duplex[] ds = new Duplex[depths.length];
            for (int i = 0; i < ds.length; i++) {
                int d = depths[i];
                FabricConnection[] cs = p.connect(new ConnectionOptions(d * 256, (1 + r.nextInt(4)) * 256));
                // Writes of up to 600 bytes into 232-byte payloads: some coalesce, some split.
                ds[i] = new Duplex(cs, Long.MAX_VALUE, i, 600, i % 2 == 0);
            }
            p.fabric.faults().releaseRandomly(0.4);
            p.fabric.faults().batchCompletions(3);
            run(p, ds, r, 1_000_000);
            for (Duplex d : ds) {
                d.ab.assertChecksumsMatch();
                d.ba.assertChecksumsMatch();
            }
            assertTrue(frames(p) >= 1_000_000, "frames: " + frames(p));
            assertNoReceiverNotReady(p);
            if (inline) {
                assertTrue(inlineFramesUsed(p), "no frame went inline");
            }
        }
    }

    @ParameterizedTest(name = "depth={0} inline={1}")
    @CsvSource({"1,false", "2,false", "3,false", "64,false", "1,true", "2,true", "3,true", "64,true"})
    void noDeadlockUnderBidirectionalSaturation(int depth, boolean inline) throws Exception {
        EngineConfig config = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(depth);
        try (Pair p = new Pair(config, depth, inline)) {
            Random r = new Random(depth);
            p.fabric.faults().releaseRandomly(0.5);
            Duplex[] ds = {new Duplex(p.connect(), 4L << 20, depth, 8192, true),
                new Duplex(p.connect(), 4L << 20, depth + 10, 100, false)};
            // Saturation: each side writes all it can before it reads anything.
            long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS * 2;
            int idle = 0;
            while (!(ds[0].done() && ds[1].done())) {
                boolean moved = false;
                for (Duplex d : ds) {
                    while (d.ab.write(d.a, d.bufA, d.maxWrite) > 0) {
                        moved = true;
                    }
                    while (d.ba.write(d.b, d.bufB, d.maxWrite) > 0) {
                        moved = true;
                    }
                    moved |= p.pump() > 0;
                    moved |= d.ab.read(d.b, d.bufB, Streams.size(r, d.maxWrite)) > 0;
                    moved |= d.ba.read(d.a, d.bufA, Streams.size(r, d.maxWrite)) > 0;
                }
                moved |= p.pump() > 0;
                idle = moved ? 0 : idle + 1;
                if (idle > 10_000) {
                    fail("deadlock at ring depth " + depth + ": " + ds[0].a.creditState() + " | "
                        + ds[0].b.creditState());
                }
                assertTrue(System.nanoTime() - deadline < 0, "timed out at ring depth " + depth);
            }
            for (Duplex d : ds) {
                d.ab.assertChecksumsMatch();
                d.ba.assertChecksumsMatch();
            }
            assertNoReceiverNotReady(p);
        }
    }

    /**
     * Small writes to a reader that has not read yet: each arrives as a frame of its own while there is credit, and
     * the frames behind the first unread one are copied onto it and their slots reposted, so the window holds the
     * bytes of many more writes than it has slots (as TCP's, counted in bytes) and all of them become available
     * before the first read. Then read exactly, with every slot back once read.
     */
    @ParameterizedTest(name = "{0}-byte writes")
    @ValueSource(ints = {1, 10, 333})
    void smallWritesToAReaderThatWaitsAreAllAvailable(int size) throws Exception {
        EngineConfig config = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(4);
        try (Pair p = new Pair(config, 21)) {
            FabricConnection[] cs = p.connect();
            // 3000 bytes: three of the four receive slots' payload, hundreds of frames for the smaller writes.
            Streams s = new Streams(3000, 21);
            ByteBuffer buf = ByteBuffer.allocate(size);
            p.await("every byte available before any read", () -> {
                try {
                    s.write(cs[0], buf, size);
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
                return cs[1].available() == s.total;
            });
            assertEquals(s.total, s.written);
            ByteBuffer in = ByteBuffer.allocate(4096);
            assertEquals(s.total, s.read(cs[1], in, 4096), "one read takes them all");
            s.assertChecksumsMatch();
            assertNoReceiverNotReady(p);
            cs[0].close();
            p.await("end of stream", () -> {
                try {
                    return s.read(cs[1], in, 4096) < 0;
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
        }
    }

    /**
     * Urgent bytes a receiver does not inline free their slots when they arrive (their credit comes back as after
     * a read): a writer sends fifty times more of them than the ring holds to a reader that never reads, and none
     * becomes readable. With SO_OOBINLINE they are stream bytes in their place among the others.
     */
    @Test
    void droppedUrgentBytesReturnTheirCreditAndInlinedOnesKeepTheirPlace() throws Exception {
        EngineConfig config = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(4);
        try (Pair p = new Pair(config, 5)) {
            FabricConnection[] cs = p.connect();
            ByteBuffer one = ByteBuffer.allocate(1);
            for (int i = 0; i < 200; i++) {
                one.clear();
                one.put(0, (byte) i);
                p.await("urgent byte " + i + " taken", () -> {
                    try {
                        return one.hasRemaining() && cs[0].writeUrgent(one) == 1 || !one.hasRemaining();
                    } catch (IOException e) {
                        throw new AssertionError(e);
                    }
                });
            }
            writeAll(p, cs[0], 'a');
            p.await("the byte after them", () -> cs[1].available() == 1);
            cs[1].setOobInline(true);
            writeAll(p, cs[0], 'b');
            one.clear();
            one.put(0, (byte) 'X');
            p.await("an inlined urgent byte taken", () -> {
                try {
                    return !one.hasRemaining() || cs[0].writeUrgent(one) == 1;
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            writeAll(p, cs[0], 'c');
            p.await("four bytes", () -> cs[1].available() == 4);
            ByteBuffer in = ByteBuffer.allocate(8);
            assertEquals(4, read(cs[1], in));
            assertEquals("abXc", new String(in.array(), 0, 4, java.nio.charset.StandardCharsets.US_ASCII));
            assertNoReceiverNotReady(p);
        }
    }

    private static void writeAll(Pair p, Connection c, char b) {
        ByteBuffer one = ByteBuffer.wrap(new byte[] {(byte) b});
        p.await("'" + b + "' taken", () -> {
            try {
                write(c, one);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
            return !one.hasRemaining();
        });
    }

    @Test
    void noDeadlockWithOneThreadPerSideBlockingInAwait() throws Exception {
        EngineConfig config = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(1).withSpinMicros(0);
        try (Pair p = new Pair(config, 3)) {
            FabricConnection[] cs = p.connect();
            Duplex d = new Duplex(cs, 2L << 20, 3, 3000, false);
            Streams.duplexThreads(cs, d.ab, d.ba, 3000, 3000, false,
                (me, out, buf, r) -> out.write(me, buf, Streams.size(r, 3000)));
            d.ab.assertChecksumsMatch();
            d.ba.assertChecksumsMatch();
            assertNoReceiverNotReady(p);
        }
    }

    @Test
    void creditOnlyFramesAreUnderOnePercentUnderBidirectionalLoad() throws Exception {
        try (Pair p = new Pair(EngineConfig.DEFAULT, 11)) {
            Random r = new Random(11);
            Duplex d = new Duplex(p.connect(), 64L << 20, 11, 4096, true);
            long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS * 2;
            while (!d.done()) {
                // Each side writes then reads, as a request/response or streaming application does.
                d.ab.write(d.a, d.bufA, Streams.size(r, 4096));
                d.ba.write(d.b, d.bufB, Streams.size(r, 4096));
                p.pump();
                d.ab.read(d.b, d.bufB, 4096);
                d.ba.read(d.a, d.bufA, 4096);
                assertTrue(System.nanoTime() - deadline < 0, "timed out");
            }
            d.ab.assertChecksumsMatch();
            d.ba.assertChecksumsMatch();
            long frames = frames(p);
            long credit = p.client.stats().creditFramesSent() + p.server.stats().creditFramesSent();
            assertTrue(frames > 10_000, "frames: " + frames);
            assertTrue(credit * 100 < frames, credit + " credit-only frames of " + frames);
            assertNoReceiverNotReady(p);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 32})
    void bothWriteNobodyReadsGoesQuiet(int depth) throws Exception {
        EngineConfig config = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(depth);
        // Each side's window sized by SO_RCVBUF: a side that does not read holds its ring alone (no spill).
        try (Pair p = new Pair(config, depth, false, Pair.ringOnly(config))) {
            FabricConnection[] cs = p.connect(Pair.ringOnly(config));
            ByteBuffer buf = ByteBuffer.allocate(5000);
            boolean aBlocked = false;
            boolean bBlocked = false;
            for (int i = 0; i < 10_000 && !(aBlocked && bBlocked); i++) {
                buf.clear();
                aBlocked = Pair.write(cs[0], buf) == 0;
                buf.clear();
                bBlocked = Pair.write(cs[1], buf) == 0;
                p.pump();
            }
            assertTrue(aBlocked && bBlocked, "both sides ran out of credit");
            // Let everything in flight land, then watch: no frame may move any more. A frame of small writes may be
            // held back for more to join it (HOLD_NANOS): once it leaves, its staging slot takes a write again, so
            // settle until a whole hold period passes with neither side taking a byte.
            long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS;
            for (boolean quiet = false; !quiet; ) {
                assertTrue(System.nanoTime() - deadline < 0, "the writers never went quiet");
                long settle = System.nanoTime() + 5 * FabricConnection.HOLD_NANOS;
                for (int i = 0; i < 1000 || System.nanoTime() - settle < 0; i++) {
                    p.pump();
                }
                buf.clear();
                long a = Pair.write(cs[0], buf);
                buf.clear();
                quiet = a == 0 && Pair.write(cs[1], buf) == 0;
            }
            for (int i = 0; i < 1000; i++) {
                p.pump();
            }
            long frames = frames(p);
            int work = 0;
            for (int i = 0; i < 10_000; i++) {
                work += p.pump();
                buf.clear();
                assertEquals(0, Pair.write(cs[0], buf));
            }
            assertEquals(frames, frames(p), "frames kept moving while nobody read");
            assertEquals(0, work, "progress kept finding work");
            assertNoReceiverNotReady(p);
            // And it is not dead: reading brings the streams back.
            ByteBuffer in = ByteBuffer.allocate(1 << 16);
            p.await("credit after reading", () -> {
                try {
                    in.clear();
                    Pair.read(cs[1], in);
                    buf.clear();
                    return Pair.write(cs[0], buf) > 0;
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
        }
    }
}
