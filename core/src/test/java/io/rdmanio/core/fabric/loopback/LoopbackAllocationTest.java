package io.rdmanio.core.fabric.loopback;

import static io.rdmanio.core.fabric.QueuePair.SIGNALED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.testsupport.QueueOptions;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/** The data path allocates nothing per work request once warm. */
class LoopbackAllocationTest {

    private static final int ROUNDS = 200_000;

    @Test
    void sendReceiveAndPollDoNotAllocatePerRequest() throws IOException {
        java.lang.management.ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        assumeTrue(bean instanceof com.sun.management.ThreadMXBean, "needs per-thread allocation counters");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) bean;
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "per-thread allocation counters unsupported");
        threads.setThreadAllocatedMemoryEnabled(true);
        try (Link link = Link.connected(new QueueOptions().sendWr(16).recvWr(16).serverReceives(16, 64))) {
            Completions out = new Completions(16);
            run(link, out, ROUNDS / 4);
            long tid = Thread.currentThread().getId();
            long before = threads.getThreadAllocatedBytes(tid);
            run(link, out, ROUNDS);
            long allocated = threads.getThreadAllocatedBytes(tid) - before;
            assertTrue(allocated < ROUNDS / 8, "allocated " + allocated + " bytes over " + ROUNDS + " round trips");
        }
    }

    /** Sends {@code rounds} messages, four at a time, every fourth signaled; reposts each receive. */
    private static void run(Link link, Completions out, int rounds) throws IOException {
        for (int i = 0; i < rounds; i += 4) {
            for (int k = 0; k < 4; k++) {
                link.clientQp.postSend(i + k, link.clientMr, k * 64, 64, k == 3 ? SIGNALED : 0);
            }
            int received = 0;
            while (received < 4) {
                int n = link.serverRecvCq.poll(out);
                for (int j = 0; j < n; j++) {
                    assertEquals(Completions.SUCCESS, out.status[j]);
                    link.serverQp.postRecv(out.wrId[j], link.serverMr, (int) (out.wrId[j] - 1000) * 64, 64);
                }
                received += n;
            }
            assertEquals(1, link.clientSendCq.poll(out));
        }
    }
}
