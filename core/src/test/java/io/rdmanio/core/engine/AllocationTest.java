package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The steady-state data path does not allocate: counted with the JVM's per-thread allocation counter. */
class AllocationTest {

    @Test
    void pingPongDoesNotAllocatePerMessage() throws Exception {
        java.lang.management.ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(bean instanceof com.sun.management.ThreadMXBean, "no allocation counter");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) bean;
        Assumptions.assumeTrue(threads.isThreadAllocatedMemorySupported(), "no allocation counter");
        threads.setThreadAllocatedMemoryEnabled(true);
        try (Pair p = new Pair(EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(8))) {
            FabricConnection[] cs = p.connect();
            ByteBuffer[] out = {ByteBuffer.allocateDirect(64)};
            ByteBuffer[] in = {ByteBuffer.allocate(64)};
            // Warm up until the JIT has compiled (and escape-analysed) the whole path.
            pingPong(p, cs, out, in, 150_000);
            long tid = Thread.currentThread().getId();
            long before = threads.getThreadAllocatedBytes(tid);
            int rounds = 100_000;
            pingPong(p, cs, out, in, rounds);
            long allocated = threads.getThreadAllocatedBytes(tid) - before;
            // Two messages per round: a few kilobytes in total leaves room for the JIT's and the JVM's own
            // bookkeeping, not for an allocation per message.
            assertTrue(allocated < 64 * 1024, allocated + " bytes allocated over " + rounds + " round trips");
            assertEquals(0, p.fabric.receiverNotReadyCount());
        }
    }

    private static void pingPong(Pair p, FabricConnection[] cs, ByteBuffer[] out, ByteBuffer[] in, int rounds)
        throws Exception {
        long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS * 2;
        for (int i = 0; i < rounds; i++) {
            for (int side = 0; side < 2; side++) {
                FabricConnection from = cs[side];
                FabricConnection to = cs[1 - side];
                out[0].clear();
                while (out[0].hasRemaining()) {
                    from.write(out, 0, 1);
                    p.pump();
                }
                in[0].clear();
                while (in[0].hasRemaining()) {
                    to.read(in, 0, 1);
                    p.pump();
                    if (System.nanoTime() - deadline > 0) {
                        fail("timed out at round " + i);
                    }
                }
            }
        }
    }
}
