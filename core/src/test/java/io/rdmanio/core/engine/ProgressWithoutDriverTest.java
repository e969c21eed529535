package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Progress never depends on a selector or on a thread driving the engine: a non-blocking operation drives it
 * itself, and bytes a write accepted while there was no credit leave when the credit returns although the
 * writer's engine is then driven by nobody but its closer. Two engines on one loopback fabric, so that driving
 * one never drives the other.
 */
@Timeout(60)
class ProgressWithoutDriverTest {

    private static final long TIMEOUT_NANOS = 30_000_000_000L;

    private static void within(String what, BooleanSupplier condition) throws IOException {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("no progress in time: " + what);
            }
            Thread.onSpinWait();
        }
    }

    private interface Step {
        boolean done() throws IOException;
    }

    private static boolean quietly(Step s) {
        try {
            return s.done();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        int x = seed;
        for (int i = 0; i < n; i++) {
            x = x * 1103515245 + 12345;
            b[i] = (byte) (x >>> 16);
        }
        return b;
    }

    /** Connects by polling accept and finishConnect only: no progress() call of the test's own. */
    private static FabricConnection[] connectPolled(Pair p) throws IOException {
        Connection c = p.client.connect(p.listener.localAddress(), ConnectionOptions.DEFAULT);
        Connection[] accepted = new Connection[1];
        boolean[] connected = new boolean[1];
        within("accept and finishConnect", () -> quietly(() -> {
            if (accepted[0] == null) {
                accepted[0] = p.listener.accept();
            }
            connected[0] = connected[0] || c.finishConnect();
            return accepted[0] != null && connected[0];
        }));
        assertNotNull(accepted[0]);
        return new FabricConnection[] {(FabricConnection) c, (FabricConnection) accepted[0]};
    }

    @Test
    void stagedBytesLeaveWhenCreditReturnsWithNobodyDrivingTheWriter() throws Exception {
        try (Pair p = new Pair(EngineConfig.DEFAULT)) {
            FabricConnection[] cs = connectPolled(p);
            FabricConnection writer = cs[0];
            FabricConnection reader = cs[1];
            // More than the reader holds (its ring and spill) and the writer's staging together.
            byte[] data = pattern(8 << 20, 7);
            ByteBuffer src = ByteBuffer.wrap(data);
            // Fill the window and the staging: the reader reads nothing yet (its engine spills a full ring up to
            // its bound meanwhile).
            writeUntilTheWindowStaysShut(writer, src);
            long accepted = src.position();
            assertTrue(accepted < data.length, "the window was full before all of it was written");
            assertTrue(p.client.owingCount() > 0, "bytes wait for credit: " + writer.creditState());
            // From here on only the reader's side is touched; the writer's engine has nobody but its closer.
            ByteBuffer in = ByteBuffer.allocate((int) accepted);
            within("every accepted byte reaching the reader", () -> quietly(() -> {
                assertTrue(Pair.read(reader, in) >= 0, "end of stream before the data");
                return !in.hasRemaining();
            }));
            byte[] expected = new byte[(int) accepted];
            System.arraycopy(data, 0, expected, 0, expected.length);
            assertArrayEquals(expected, in.array());
            within("the writer owing nothing", () -> p.client.owingCount() == 0);
        }
    }

    @Test
    void theCloserIsParkedWithoutDeadlineOnceNothingIsOwed() throws Exception {
        try (Pair p = new Pair(EngineConfig.DEFAULT)) {
            FabricConnection[] cs = connectPolled(p);
            byte[] data = pattern(1 << 20, 3);
            ByteBuffer src = ByteBuffer.wrap(data);
            ByteBuffer in = ByteBuffer.allocate(data.length);
            within("1 MiB polled", () -> quietly(() -> {
                if (src.hasRemaining()) {
                    Pair.write(cs[0], src);
                }
                assertTrue(Pair.read(cs[1], in) >= 0);
                return !in.hasRemaining();
            }));
            assertArrayEquals(data, in.array());
            within("nothing owed", () -> p.client.owingCount() == 0 && p.server.owingCount() == 0);
            // Idle means parked without a deadline (no periodic wakeups), and no relayed arm left behind.
            within("the closers parked without a deadline", () -> {
                int closers = 0;
                for (Thread t : Thread.getAllStackTraces().keySet()) {
                    if (t.getName().equals("rdmanio-loopback-closer") && t.isAlive()) {
                        if (t.getState() != Thread.State.WAITING) {
                            return false;
                        }
                        closers++;
                    }
                }
                return closers > 0;
            });
            within("no waiter registered", () -> p.client.isWaitIdle() && p.server.isWaitIdle());
        }
    }

    @Test
    void nonBlockingOperationsAloneCompleteAConnectAndAnEcho() throws Exception {
        try (Pair p = new Pair(EngineConfig.DEFAULT)) {
            FabricConnection[] cs = connectPolled(p);
            ByteBuffer out = ByteBuffer.wrap(pattern(64, 1));
            assertEquals(64, Pair.write(cs[0], out));
            ByteBuffer at = ByteBuffer.allocate(64);
            within("the request", () -> quietly(() -> Pair.read(cs[1], at) >= 0 && !at.hasRemaining()));
            at.flip();
            assertEquals(64, Pair.write(cs[1], at));
            ByteBuffer back = ByteBuffer.allocate(64);
            within("the answer", () -> quietly(() -> Pair.read(cs[0], back) >= 0 && !back.hasRemaining()));
            assertArrayEquals(pattern(64, 1), back.array());
            assertTrue(cs[0].localAddress() instanceof InetSocketAddress);
        }
    }

    /**
     * A reader that neither reads nor waits yet (a parent that reads its child's output only once the child has
     * exited) still takes its peer's small writes, as a TCP receive buffer does: 200 writes of 10 bytes a
     * millisecond apart (each its own frame: the writer holds a small frame back for less than that) would
     * otherwise fill the ring's 32 slots with 320 bytes and leave the rest staged at the writer until the reader
     * reads (a writer that exits then lingers, its bytes undelivered). The reader's engine is driven by nobody but
     * its closer until the writer owes nothing; then one read takes every byte.
     */
    @Test
    void smallWritesToAReaderThatNeitherReadsNorWaitsAreAllDelivered() throws Exception {
        try (Pair p = new Pair(EngineConfig.DEFAULT)) {
            FabricConnection[] cs = connectPolled(p);
            byte[] data = pattern(2_000, 5);
            for (int off = 0; off < data.length; off += 10) {
                assertEquals(10, Pair.write(cs[0], ByteBuffer.wrap(data, off, 10)), "a send buffer's room");
                LockSupport.parkNanos(1_000_000);
            }
            within("the writer owing nothing (its reader's engine took every frame)",
                () -> p.client.owingCount() == 0);
            ByteBuffer in = ByteBuffer.allocate(1 << 16);
            assertEquals(data.length, Pair.read(cs[1], in), "one read takes every byte, as from TCP's buffer");
            assertArrayEquals(data, Arrays.copyOf(in.array(), in.position()));
        }
    }

    /** Non-blocking writes from {@code src} until 200 in a row, a millisecond apart, took nothing. */
    private static void writeUntilTheWindowStaysShut(FabricConnection writer, ByteBuffer src) throws IOException {
        int zeros = 0;
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        while (src.hasRemaining() && zeros < 200) {
            assertTrue(System.nanoTime() - deadline < 0, "the writes never stopped");
            if (Pair.write(writer, src) == 0) {
                zeros++;
                LockSupport.parkNanos(1_000_000);
            } else {
                zeros = 0;
            }
        }
    }

    /**
     * A writer that closes with more bytes than its reader's ring holds is not held back by a reader that neither
     * reads nor waits (a parent that reads its child's output once the child has exited): the reader's engine
     * spills the unread frames of a full ring into the connection's own memory, as the kernel's TCP receive
     * buffer grows for it, so the writer's bytes and FIN are all delivered and nothing lingers. Then reads take
     * every byte in order and end of stream.
     */
    @Test
    void aWriterThatClosesIsNotHeldByAReaderThatNeitherReadsNorWaits() throws Exception {
        try (Pair p = new Pair(EngineConfig.DEFAULT)) {
            FabricConnection[] cs = connectPolled(p);
            // Three loopback rings' worth (32 slots of 16 KiB): staged, most of it waits for credit at first.
            byte[] data = pattern(3 << 20, 11);
            ByteBuffer src = ByteBuffer.wrap(data);
            within("the writer's staging taking it all", () -> quietly(() -> {
                Pair.write(cs[0], src);
                return !src.hasRemaining();
            }));
            cs[0].close();
            within("the writer owing nothing and lingering nowhere (its FIN delivered)",
                () -> p.client.owingCount() == 0 && p.client.lingeringCount() == 0);
            within("every byte held for the reader", () -> cs[1].available() == data.length);
            ByteBuffer in = ByteBuffer.allocate(data.length + 1);
            within("every byte read, then end of stream", () -> quietly(() -> Pair.read(cs[1], in) < 0));
            assertEquals(data.length, in.position());
            assertArrayEquals(data, Arrays.copyOf(in.array(), data.length));
        }
    }

    /**
     * A reader that asks {@code available()} without reading (one waiting for a message's length to arrive) is
     * shown more than its ring holds, and the spill is bounded: it holds at most {@link
     * FabricConnection#RECEIVE_HOLD_BYTES} (ring and spill), and then the window stays shut, as TCP's does for a
     * reader that does not read. A reader whose SO_RCVBUF was set holds its ring alone. Reads afterwards take
     * exactly the bytes written, in order, through spill and ring, while the writer goes on.
     */
    @Test
    void theSpillIsBoundedAndARingSizedBySoRcvbufDoesNotSpill() throws Exception {
        try (Pair p = new Pair(EngineConfig.DEFAULT)) {
            FabricConnection[] cs = connectPolled(p);
            byte[] data = pattern(16 << 20, 13);
            ByteBuffer src = ByteBuffer.wrap(data);
            long full = FabricConnection.RECEIVE_HOLD_BYTES - 2 * 16384;
            within("the reader holding its ring and a full spill", () -> quietly(() -> {
                Pair.write(cs[0], src);
                return cs[1].available() >= full;
            }));
            writeUntilTheWindowStaysShut(cs[0], src);
            assertTrue(src.hasRemaining(), "the window stays shut before 16 MiB");
            assertEquals(1, p.client.owingCount(), "the writer's staging waits for credit");
            long held = cs[1].available();
            assertTrue(held <= FabricConnection.RECEIVE_HOLD_BYTES, "held " + held);
            // Small reads while the writer goes on: through the spill, the ring frames moved into it as it is read
            // down, and the ring; every byte in its place.
            byte[] got = new byte[data.length];
            int[] read = new int[1];
            ByteBuffer piece = ByteBuffer.allocate(1000);
            within("all 16 MiB read in pieces of 1,000 bytes", () -> quietly(() -> {
                Pair.write(cs[0], src);
                piece.clear();
                long n = Pair.read(cs[1], piece);
                assertTrue(n >= 0, "end of stream before the data");
                System.arraycopy(piece.array(), 0, got, read[0], (int) n);
                read[0] += (int) n;
                return read[0] == data.length;
            }));
            assertArrayEquals(data, got);
        }
        try (Pair p = new Pair(EngineConfig.DEFAULT)) {
            // The client reads here, its window sized by SO_RCVBUF: 4 slots of 16 KiB.
            Connection c = p.client.connect(p.listener.localAddress(), new ConnectionOptions(4 * 16384, 0));
            Connection[] accepted = new Connection[1];
            within("accept and finishConnect", () -> quietly(() -> {
                if (accepted[0] == null) {
                    accepted[0] = p.listener.accept();
                }
                return accepted[0] != null && c.finishConnect();
            }));
            byte[] data = pattern(1 << 20, 17);
            ByteBuffer src = ByteBuffer.wrap(data);
            writeUntilTheWindowStaysShut((FabricConnection) accepted[0], src);
            assertTrue(c.available() <= 4 * 16384, "held " + c.available());
            ByteBuffer in = ByteBuffer.allocate(src.position());
            within("every accepted byte read", () -> quietly(() -> {
                assertTrue(Pair.read((FabricConnection) c, in) >= 0, "end of stream before the data");
                return !in.hasRemaining();
            }));
            assertArrayEquals(Arrays.copyOf(data, in.capacity()), in.array());
        }
    }
}
