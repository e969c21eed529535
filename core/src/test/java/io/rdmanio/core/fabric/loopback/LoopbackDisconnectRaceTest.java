package io.rdmanio.core.fabric.loopback;

import static io.rdmanio.core.fabric.QueuePair.SIGNALED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.testsupport.QueueOptions;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A disconnect racing a sender and a receiver that poll and post from their own threads: whatever the
 * interleaving, every posted request completes exactly once (success or flush), in order, and nothing hangs.
 */
class LoopbackDisconnectRaceTest {

    private static final int RECEIVES = 8;

    @Test
    void disconnectRacingPostsAndPollsCompletesEveryRequestExactlyOnce() throws Exception {
        for (int iteration = 0; iteration < 20; iteration++) {
            runOnce(iteration * 37L);
        }
    }

    private static void runOnce(long disconnectAfter) throws Exception {
        try (Link link = Link.connected(new QueueOptions().sendWr(8).recvWr(RECEIVES).serverReceives(0, 64))) {
            for (int i = 0; i < RECEIVES; i++) {
                link.serverQp.postRecv(i, link.serverMr, i * 64, 64);
            }
            Semaphore credits = new Semaphore(RECEIVES);
            AtomicLong received = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CyclicBarrier start = new CyclicBarrier(3);
            long[] sendResult = new long[2];
            long[] recvResult = new long[2];

            Thread sender = new Thread(() -> {
                try {
                    start.await(30, TimeUnit.SECONDS);
                    Completions out = new Completions(8);
                    long posted = 0;
                    long completed = 0;
                    boolean failed = false;
                    for (long round = 0; round < 50_000_000L && !(failed && completed == posted); round++) {
                        int n = link.clientSendCq.poll(out);
                        for (int k = 0; k < n; k++) {
                            assertEquals(completed, out.wrId[k], "send completions in order, once each");
                            int st = out.status[k];
                            assertTrue(st == Completions.SUCCESS || st == Completions.WR_FLUSH_ERR,
                                Completions.statusName(st));
                            failed |= st != Completions.SUCCESS;
                            completed++;
                        }
                        if (!failed && posted - completed < 8 && credits.tryAcquire()) {
                            try {
                                link.clientQp.postSend(posted, link.clientMr, 0, 16, SIGNALED);
                                posted++;
                            } catch (FabricException e) {
                                failed = true;
                            }
                        }
                        failed |= link.clientQp.isError();
                        if (n == 0) {
                            Thread.yield();
                        }
                    }
                    assertTrue(failed, "the sender saw the connection end");
                    sendResult[0] = posted;
                    sendResult[1] = completed;
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "sender");

            Thread receiver = new Thread(() -> {
                try {
                    start.await(30, TimeUnit.SECONDS);
                    Completions out = new Completions(8);
                    long flushed = 0;
                    long ok = 0;
                    for (long round = 0; round < 50_000_000L && flushed < RECEIVES; round++) {
                        int n = link.serverRecvCq.poll(out);
                        if (n == 0) {
                            Thread.yield();
                        }
                        for (int k = 0; k < n; k++) {
                            if (out.status[k] == Completions.SUCCESS) {
                                ok++;
                                received.incrementAndGet();
                                try {
                                    link.serverQp.postRecv(out.wrId[k], link.serverMr, (int) out.wrId[k] * 64, 64);
                                    credits.release();
                                } catch (FabricException e) {
                                    flushed++; // the slot is gone with the connection
                                }
                            } else {
                                assertEquals(Completions.WR_FLUSH_ERR, out.status[k]);
                                flushed++;
                            }
                        }
                    }
                    recvResult[0] = ok;
                    recvResult[1] = flushed;
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "receiver");

            sender.start();
            receiver.start();
            start.await(30, TimeUnit.SECONDS);
            for (long spins = 0; received.get() < disconnectAfter && spins < 100_000_000L; spins++) {
                Thread.yield();
            }
            link.server.disconnect();
            sender.join(TimeUnit.SECONDS.toMillis(60));
            receiver.join(TimeUnit.SECONDS.toMillis(60));
            assertNull(failure.get(), () -> "a thread failed: " + failure.get());
            assertEquals(sendResult[0], sendResult[1], "every posted send completed exactly once");
            assertEquals(RECEIVES, recvResult[1], "every receive slot ended flushed");
            assertEquals(0, link.clientFabric.receiverNotReadyCount());
        }
    }
}
