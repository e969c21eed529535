package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a burst of connections registered (pool chunks, completion queues; on shm, shared files, descriptors and
 * wakeup pipes) is given back after its grace by the engine's closer alone, although nobody drives the engine once
 * the burst is over and a connection that stays open keeps the closer waiting for its arrivals. The closer learns
 * of slots given back while it waits, not only at its next wakeup for something else.
 */
@Timeout(120)
class IdleReleaseTest {

    private static final long TIMEOUT_NANOS = 30_000_000_000L;

    @Test
    void aBurstsMemoryAndQueuesAreGivenBackWhileOneIdleConnectionStaysOpen() throws Exception {
        try (Pair p = new Pair(EngineConfig.DEFAULT)) {
            FabricConnection[] kept = p.connect(ConnectionOptions.DEFAULT);
            exchange(p, kept);
            long baselineBytes = p.server.registeredBytes();
            int baselineCqs = p.server.completionQueueCount();
            for (int round = 0; round < 5; round++) {
                FabricConnection[][] burst = new FabricConnection[40][];
                for (int i = 0; i < burst.length; i++) {
                    burst[i] = p.connect(ConnectionOptions.DEFAULT);
                }
                long peak = p.server.registeredBytes();
                int peakCqs = p.server.completionQueueCount();
                assertTrue(peak >= baselineBytes + 2 * p.server.chunkBytes(),
                    "the burst registers chunks beyond what one connection holds: " + peak + " bytes against "
                        + baselineBytes + " (" + peakCqs + " completion queues against " + baselineCqs + ")");
                for (FabricConnection[] pair : burst) {
                    pair[0].close();
                    pair[1].close();
                }
                p.await("the burst's teardown", () -> p.server.connectionCount() == 1 && p.client.connectionCount() == 1
                        && p.server.lingeringCount() == 0 && p.client.lingeringCount() == 0);
                // From here nobody drives the engines: only their closers, which wait for the kept connection's
                // arrivals.
                long deadline = System.nanoTime() + TIMEOUT_NANOS;
                while (p.server.registeredBytes() > baselineBytes + p.server.chunkBytes()
                    || p.server.completionQueueCount() > baselineCqs) {
                    if (System.nanoTime() - deadline > 0) {
                        fail("round " + round + ": the server engine still holds " + p.server.registeredBytes()
                            + " registered bytes and " + p.server.completionQueueCount() + " completion queues "
                            + TIMEOUT_NANOS / 1_000_000_000L + " s after its burst ended (" + baselineBytes + " and "
                            + baselineCqs + " before it, chunks of " + p.server.chunkBytes() + " bytes)");
                    }
                    LockSupport.parkNanos(10_000_000L);
                }
                // The kept connection still works.
                exchange(p, kept);
            }
            assertEquals(1, p.server.connectionCount());
        }
    }

    /** A few bytes each way on {@code c} ({client, server}), checked. */
    private static void exchange(Pair p, FabricConnection[] c) throws IOException {
        byte[] out = {1, 2, 3, 4, 5};
        Pair.write(c[0], ByteBuffer.wrap(out));
        ByteBuffer in = ByteBuffer.allocate(out.length);
        p.await("the bytes there", () -> readSome(c[1], in));
        assertEquals(ByteBuffer.wrap(out), in.flip());
        Pair.write(c[1], in);
        ByteBuffer back = ByteBuffer.allocate(out.length);
        p.await("the bytes back", () -> readSome(c[0], back));
        assertEquals(ByteBuffer.wrap(out), back.flip());
    }

    /** Reads what is there into {@code b}; whether it is full. */
    private static boolean readSome(Connection c, ByteBuffer b) {
        try {
            Pair.read(c, b);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return !b.hasRemaining();
    }
}
