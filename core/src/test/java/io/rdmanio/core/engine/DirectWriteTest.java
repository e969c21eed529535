package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.ByteBuffer;
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
        try (Pair p = new Pair(config, 7, inline, Pair.ringOnly(config))) {
            plain = fill(p.connect()[0], new Streams(1L << 30, 5), false);
        }
        try (Pair p = new Pair(config, 7, inline, Pair.ringOnly(config))) {
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
            Streams.duplexThreads(cs, ab, ba, SLOT * 6, SLOT * 3, true, (me, out, buf, r) -> {
                // Mostly a slot or more, the writes that wait for credit; some small ones between.
                int max = r.nextInt(4) == 0 ? 200 : SLOT * 6;
                return out.write(me, buf, Streams.size(r, max), true);
            });
            ab.assertChecksumsMatch();
            ba.assertChecksumsMatch();
            assertEquals(0, p.fabric.receiverNotReadyCount(), "receiver-not-ready on the fabric");
        }
    }
}
