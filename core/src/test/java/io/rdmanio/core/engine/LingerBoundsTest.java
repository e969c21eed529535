package io.rdmanio.core.engine;

import static io.rdmanio.core.engine.Pair.read;
import static io.rdmanio.core.engine.Pair.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * What a closed connection may hold, and for how long (rdmanio.lingerMillis, rdmanio.lingerMaxBytes), and what a
 * reset leaves readable, on the strict loopback fabric.
 */
class LingerBoundsTest {

    private static final EngineConfig SMALL = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(4);

    /**
     * Writes until the peer's window and this end's staging are full (the peer does not read). A write that takes
     * nothing does not mean that yet: the slots of frames in flight come back only when their sends' completions
     * are polled, which a busy machine may not have done.
     */
    private static Streams fill(Pair p, FabricConnection c, int seed) throws IOException {
        Streams s = new Streams(1 << 20, seed);
        ByteBuffer buf = ByteBuffer.allocate(4096);
        p.await("the peer's window and this side's staging full", () -> {
            try {
                s.write(c, buf, 4096);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
            return c.isStagingFull();
        });
        assertTrue(s.written > 0 && s.written < s.total, "staging filled before the reader read");
        s.endHere();
        return s;
    }

    /**
     * A pair whose accepted connections, the readers here, hold their ring alone when they do not read (their
     * window set as SO_RCVBUF is, so no spill): the tests fill it.
     */
    private static Pair nonReading(EngineConfig config) throws IOException {
        return new Pair(config, 1L, false, Pair.ringOnly(config));
    }

    /** {@link #SMALL} with a linger memory bound that holds one closed connection's footprint, not two. */
    private static EngineConfig roomForOneClosedConnection() throws IOException {
        long footprint;
        try (Pair p = nonReading(SMALL)) {
            footprint = p.connect()[0].lingerFootprint();
        }
        return SMALL.withLingerMaxBytes(footprint + footprint / 2);
    }

    /** Reads what arrived until the connection's failure; returns it. */
    private static IOException readUntilFailure(Pair p, FabricConnection c, Streams s) {
        IOException[] failure = new IOException[1];
        ByteBuffer in = ByteBuffer.allocate(4096);
        p.await("the bytes that arrived, then the reset", () -> {
            try {
                return s.read(c, in, 4096) < 0;
            } catch (IOException e) {
                failure[0] = e;
                return true;
            }
        });
        return failure[0];
    }

    @Test
    void aClosedConnectionThatDeliversNothingIsResetAfterLingerMillis() throws Exception {
        try (Pair p = nonReading(SMALL.withLingerMillis(200))) {
            FabricConnection[] cs = p.connect();
            Streams s = fill(p, cs[0], 1);
            cs[0].close();
            // Nobody reads: the closer gives up after the bound, resets the peer and frees everything.
            p.await("the closed side given up", cs[0]::isTornDown);
            assertEquals(0, p.client.lingeringCount());
            assertEquals(0, p.client.pool().slotsInUse());
            IOException e = readUntilFailure(p, cs[1], s);
            assertTrue(e != null && e.getMessage().contains("reset"), "a reset after what arrived: " + e);
            assertTrue(s.read > 0 && s.read < s.written, "the bytes that had arrived were read, in order: "
                + s.read + " of " + s.written);
            cs[1].close();
            p.await("teardown", cs[1]::isTornDown);
            assertEquals(0, p.server.pool().slotsInUse());
        }
    }

    @Test
    void aSlowReaderKeepsAClosedConnectionAliveBeyondLingerMillis() throws Exception {
        try (Pair p = nonReading(SMALL.withLingerMillis(200))) {
            FabricConnection[] cs = p.connect();
            Streams s = new Streams(1 << 20, 2);
            ByteBuffer buf = ByteBuffer.allocate(4096);
            for (int i = 0; i < 10_000 && s.write(cs[0], buf, 4096) > 0; i++) {
                p.pump();
            }
            s.endHere();
            cs[0].close();
            // Each frame delivered starts the bound again: a reader slower than the bound in total, but never
            // idle for that long, gets everything.
            ByteBuffer in = ByteBuffer.allocate(1024);
            p.await("every byte, then EOF", () -> {
                try {
                    long n = s.read(cs[1], in, 1024);
                    Thread.sleep(30);
                    return n < 0;
                } catch (IOException e) {
                    throw new AssertionError("the slow reader failed after " + s.read + " bytes", e);
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
            s.assertChecksumsMatch();
        }
    }

    @Test
    void theLongestLingeringConnectionIsResetBeyondLingerMaxBytes() throws Exception {
        try (Pair p = nonReading(roomForOneClosedConnection())) {
            FabricConnection[] a = p.connect();
            FabricConnection[] b = p.connect();
            fill(p, a[0], 3);
            fill(p, b[0], 4);
            a[0].close();
            b[0].close();
            p.await("the older closed connection reset", a[0]::isTornDown);
            IOException e = readUntilFailure(p, a[1], new Streams(1 << 20, 3));
            assertTrue(e != null && e.getMessage().contains("reset"), "a reset: " + e);
            assertFalse(b[0].isTornDown(), "the newer one still lingers within the bound");
            assertEquals(1, p.client.lingeringCount());
        }
    }

    /**
     * The bound holds when nobody drives progress: a second close must make the closer look again, whatever it was
     * doing (it may be between its last check and its wait for the first connection's 30 s deadline, and no
     * completion comes to wake it: the peers do not read). Closes back to back, many times, to meet that window.
     */
    @Test
    void aSecondCloseBeyondLingerMaxBytesResetsTheOlderWithoutAnyProgressDriver() throws Exception {
        EngineConfig config = roomForOneClosedConnection();
        for (int round = 0; round < 20; round++) {
            try (Pair p = nonReading(config)) {
                FabricConnection[] a = p.connect();
                FabricConnection[] b = p.connect();
                fill(p, a[0], 5);
                fill(p, b[0], 6);
                a[0].close();
                if ((round & 1) == 1) {
                    Thread.sleep(round);
                }
                b[0].close();
                // This thread drives nothing from here on.
                long deadline = System.nanoTime() + 5_000_000_000L;
                while (!a[0].isTornDown() && System.nanoTime() - deadline < 0) {
                    Thread.sleep(2);
                }
                assertTrue(a[0].isTornDown(), "round " + round + ": the older closed connection was reset when the"
                    + " newer one closed");
                assertFalse(b[0].isTornDown(), "round " + round + ": the newer one still lingers within the bound");
            }
        }
    }

    @Test
    void bytesReceivedBeforeAResetStayReadableAfterTheTeardown() throws Exception {
        try (Pair p = nonReading(SMALL)) {
            FabricConnection[] cs = p.connect();
            Streams s = new Streams(3000, 5);
            ByteBuffer buf = ByteBuffer.allocate(4096);
            s.write(cs[0], buf, 4096);
            assertEquals(3000, s.written);
            cs[0].abort();
            // The reset tears the reader's side down too; its unread frames keep their slots until read.
            p.await("the reader's side torn down", cs[1]::isTornDown);
            assertTrue(p.server.pool().slotsInUse() > 0, "the unread frames' slots are kept");
            IOException e = readUntilFailure(p, cs[1], s);
            assertEquals("Connection reset", e.getMessage(), "a read reports the reset as the JDK does");
            assertEquals(3000, s.read, "every byte that arrived before the reset");
            assertThrows(IOException.class, () -> read(cs[1], ByteBuffer.allocate(1)), "the reset stays");
            // Ignored after a reset, as on a TCP socket.
            cs[1].shutdownOutput();
            assertThrows(IOException.class, () -> write(cs[1], ByteBuffer.allocate(1)));
            assertEquals(0, p.server.pool().slotsInUse(), "read frames give their slots back");
            cs[1].close();
            assertEquals(0, p.client.pool().slotsInUse());
        }
    }

    @Test
    void closingAfterAResetFreesTheUnreadFrames() throws Exception {
        try (Pair p = nonReading(SMALL)) {
            FabricConnection[] cs = p.connect();
            write(cs[0], ByteBuffer.allocate(3000));
            cs[0].abort();
            p.await("the reader's side torn down", cs[1]::isTornDown);
            cs[1].close();
            assertEquals(0, p.server.pool().slotsInUse());
        }
    }
}
