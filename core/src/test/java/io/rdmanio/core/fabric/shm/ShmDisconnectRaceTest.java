package io.rdmanio.core.fabric.shm;

import static io.rdmanio.core.fabric.shm.ShmTestSupport.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.QueuePair;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The race between a receiver closing its receive queue (disconnect) and a sender taking receives from it: every
 * receive completes exactly once, in the order it was posted, either with the sender's data or flushed, never
 * both; every signaled send completes once.
 */
class ShmDisconnectRaceTest extends WithShmDirectory {

    private static final int DEPTH = 16;
    private static final int ROUNDS = 40;

    @Test
    void disconnectRacingSendsCompletesEveryReceiveOnceInOrder() throws Exception {
        Random random = new Random();
        for (int round = 0; round < ROUNDS; round++) {
            try (ShmPair pair = ShmPair.connected(dir, DEPTH, DEPTH, 64)) {
                AtomicLong consumed = new AtomicLong();
                AtomicReference<Throwable> failure = new AtomicReference<>();
                CountDownLatch start = new CountDownLatch(1);
                boolean receiverDisconnects = random.nextBoolean();
                long disconnectAfterNanos = random.nextInt(2_000_000);

                Thread sender = new Thread(() -> {
                    Completions out = new Completions(DEPTH);
                    long sent = 0;
                    try {
                        start.await();
                        while (!pair.clientQp.isError()) {
                            if (sent - consumed.get() < DEPTH) {
                                try {
                                    pair.clientQp.postSend(sent, pair.clientMr, 0, 64, QueuePair.SIGNALED);
                                    sent++;
                                } catch (FabricException e) {
                                    if (!pair.clientQp.isError()) {
                                        throw e;
                                    }
                                }
                            }
                            pair.clientSendCq.poll(out);
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                });
                Thread receiver = new Thread(() -> {
                    Completions out = new Completions(DEPTH);
                    // Receives carry increasing ids: 1000 .. 1000 + DEPTH - 1 were posted before the connect.
                    long nextPosted = 1000 + DEPTH;
                    long expected = 1000;
                    boolean flushing = false;
                    long deadline = System.nanoTime() + ShmTestSupport.TIMEOUT_NANOS;
                    try {
                        start.await();
                        while (expected < nextPosted) {
                            if (System.nanoTime() - deadline > 0) {
                                fail("receives " + expected + " .. " + nextPosted + " never completed");
                            }
                            int n = pair.serverRecvCq.poll(out);
                            for (int i = 0; i < n; i++) {
                                assertEquals(expected, out.wrId[i], "receives complete once, in order");
                                expected++;
                                if (out.status[i] == Completions.SUCCESS) {
                                    assertTrue(!flushing, "a receive completed with data after a flushed one");
                                    if (!pair.serverQp.isError()) {
                                        try {
                                            pair.serverQp.postRecv(nextPosted, pair.serverMr,
                                                (int) (nextPosted % DEPTH) * 64, 64);
                                            nextPosted++;
                                            // Credit for the sender only once the receive is posted again.
                                            consumed.incrementAndGet();
                                        } catch (FabricException e) {
                                            if (!pair.serverQp.isError()) {
                                                throw e;
                                            }
                                        }
                                    }
                                } else {
                                    assertEquals(Completions.WR_FLUSH_ERR, out.status[i],
                                        Completions.statusName(out.status[i]));
                                    flushing = true;
                                }
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                });
                sender.start();
                receiver.start();
                start.countDown();
                LockSupport.parkNanos(disconnectAfterNanos);
                if (receiverDisconnects) {
                    pair.server.disconnect();
                } else {
                    pair.client.disconnect();
                }
                sender.join(30_000);
                receiver.join(30_000);
                if (failure.get() != null) {
                    throw new AssertionError("round " + round, failure.get());
                }
                assertTrue(!sender.isAlive() && !receiver.isAlive(), "threads finished");
                expect(pair.clientEvents, CmEvent.Type.DISCONNECTED);
                expect(pair.serverEvents, CmEvent.Type.DISCONNECTED);
                assertEquals(null, pair.clientEvents.poll(), "one DISCONNECTED per side");
                assertEquals(null, pair.serverEvents.poll(), "one DISCONNECTED per side");
                assertEquals(0, pair.clientFabric.receiverNotReadyCount());
            }
        }
    }
}
