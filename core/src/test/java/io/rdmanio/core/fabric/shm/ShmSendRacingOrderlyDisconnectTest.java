package io.rdmanio.core.fabric.shm;

import static io.rdmanio.core.fabric.shm.ShmTestSupport.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * The race between a sender posting and its peer disconnecting in order (its DISCONNECT message still on the way
 * through the socket while the sender finds the peer's receive queue closed). The sender's requests complete with
 * data or flushed, as when the DISCONNECT message arrives first, never with RETRY_EXC_ERR ("peer unreachable"): an
 * orderly close is no error for the other side, as TCP drops data that reaches a closed socket without an error
 * for the write that sent it.
 */
class ShmSendRacingOrderlyDisconnectTest extends WithShmDirectory {

    private static final int DEPTH = 16;
    private static final int ROUNDS = 60;

    @Test
    void sendRacingThePeersOrderlyDisconnectIsFlushedNotFailed() throws Exception {
        Random random = new Random();
        int raced = 0;
        for (int round = 0; round < ROUNDS; round++) {
            try (ShmPair pair = ShmPair.connected(dir, DEPTH, DEPTH, 64)) {
                AtomicLong consumed = new AtomicLong();
                AtomicReference<Throwable> failure = new AtomicReference<>();
                AtomicReference<String> badStatus = new AtomicReference<>();
                AtomicLong flushed = new AtomicLong();
                CountDownLatch start = new CountDownLatch(2);
                long disconnectAfterNanos = random.nextInt(1_000_000);

                Thread sender = new Thread(() -> {
                    Completions out = new Completions(DEPTH);
                    long sent = 0;
                    long completed = 0;
                    try {
                        start.countDown();
                        start.await();
                        while (!pair.clientQp.isError() || completed < sent) {
                            if (!pair.clientQp.isError() && sent - consumed.get() < DEPTH) {
                                try {
                                    pair.clientQp.postSend(sent, pair.clientMr, 0, 64, QueuePair.SIGNALED);
                                    sent++;
                                } catch (FabricException e) {
                                    if (!pair.clientQp.isError()) {
                                        throw e;
                                    }
                                }
                            }
                            int n = pair.clientSendCq.poll(out);
                            for (int i = 0; i < n; i++) {
                                completed++;
                                if (out.status[i] == Completions.WR_FLUSH_ERR) {
                                    flushed.incrementAndGet();
                                } else if (out.status[i] != Completions.SUCCESS) {
                                    badStatus.compareAndSet(null, Completions.statusName(out.status[i]));
                                }
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                });
                Thread receiver = new Thread(() -> {
                    Completions out = new Completions(DEPTH);
                    long nextPosted = 1000 + DEPTH;
                    try {
                        start.countDown();
                        start.await();
                        while (!pair.serverQp.isError()) {
                            int n = pair.serverRecvCq.poll(out);
                            for (int i = 0; i < n && !pair.serverQp.isError(); i++) {
                                if (out.status[i] != Completions.SUCCESS) {
                                    break;
                                }
                                try {
                                    pair.serverQp.postRecv(nextPosted, pair.serverMr, (int) (nextPosted % DEPTH) * 64,
                                        64);
                                    nextPosted++;
                                    consumed.incrementAndGet();
                                } catch (FabricException e) {
                                    if (!pair.serverQp.isError()) {
                                        throw e;
                                    }
                                }
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                });
                sender.start();
                receiver.start();
                start.await();
                LockSupport.parkNanos(disconnectAfterNanos);
                pair.server.disconnect();
                sender.join(30_000);
                receiver.join(30_000);
                assertFalse(sender.isAlive() || receiver.isAlive(), "round " + round + ": threads finished");
                if (failure.get() != null) {
                    throw new AssertionError("round " + round, failure.get());
                }
                assertEquals(null, badStatus.get(), "round " + round + ": a send racing the peer's orderly"
                    + " disconnect completed with an error");
                CmEvent end = expect(pair.clientEvents, CmEvent.Type.DISCONNECTED);
                assertTrue(end.reason() == null || !end.reason().contains("retr"),
                    "round " + round + ": the sender's connection ended as an orderly disconnect: " + end.reason());
                expect(pair.serverEvents, CmEvent.Type.DISCONNECTED);
                if (flushed.get() > 0) {
                    raced++;
                }
            }
        }
        System.out.println("send racing an orderly disconnect: " + raced + " of " + ROUNDS
            + " rounds flushed a send the peer's closed queue refused");
    }
}
