package io.rdmanio.core.fabric.loopback;

import static io.rdmanio.core.fabric.QueuePair.SIGNALED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.testsupport.QueueOptions;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Two threads, two connections: each thread sends on one connection and receives on the other, so every
 * connection is driven from both ends at once (posting receives while the peer's poll carries out sends).
 * Credits (a semaphore per connection, released when a receive is reposted) keep the senders within the posted
 * receives; a single receiver-not-ready or a byte out of place fails the test.
 */
class LoopbackConcurrencyTest {

    private static final int MESSAGES = 20_000;
    private static final int RECEIVES = 8;
    private static final int SLOT = 64;

    /** One direction of traffic: the client of {@code link} sends, its server receives. */
    private static final class Flow {
        final Link link;
        final Semaphore credits = new Semaphore(0);
        final Completions sendOut = new Completions(16);
        final Completions recvOut = new Completions(16);
        volatile long sent;
        volatile long outstanding;
        volatile long received;

        Flow(Link link) throws IOException {
            this.link = link;
            for (int i = 0; i < RECEIVES; i++) {
                link.serverQp.postRecv(i, link.serverMr, i * SLOT, SLOT);
            }
            credits.release(RECEIVES);
        }

        /** Sends what credit and the send queue allow; returns whether anything happened. */
        boolean send() throws IOException {
            boolean progress = false;
            int n = link.clientSendCq.poll(sendOut);
            for (int k = 0; k < n; k++) {
                assertEquals(Completions.SUCCESS, sendOut.status[k]);
            }
            outstanding -= n;
            progress |= n > 0;
            while (sent < MESSAGES && outstanding < link.options.sendWr && credits.tryAcquire()) {
                int slot = (int) (sent % link.options.sendWr);
                ByteBuffer b = link.clientMr.buffer();
                b.putLong(slot * SLOT, sent);
                b.putLong(slot * SLOT + 8, ~sent);
                link.clientQp.postSend(sent, link.clientMr, slot * SLOT, 16, SIGNALED);
                sent++;
                outstanding++;
                progress = true;
            }
            return progress;
        }

        /** Takes what arrived, checks it and reposts the receives. */
        boolean receive() throws IOException {
            int n = link.serverRecvCq.poll(recvOut);
            ByteBuffer b = link.serverMr.buffer();
            for (int k = 0; k < n; k++) {
                assertEquals(Completions.SUCCESS, recvOut.status[k]);
                assertEquals(16, recvOut.byteLen[k]);
                int slot = (int) recvOut.wrId[k];
                assertEquals(received, b.getLong(slot * SLOT), "messages arrive in order");
                assertEquals(~received, b.getLong(slot * SLOT + 8));
                received++;
                link.serverQp.postRecv(slot, link.serverMr, slot * SLOT, SLOT);
                credits.release();
            }
            return n > 0;
        }

        boolean done() {
            return received == MESSAGES && sent == MESSAGES && outstanding == 0;
        }
    }

    @Test
    void twoThreadsDrivingTwoConnectionsFromBothEnds() throws Exception {
        try (Link a = Link.connected(new QueueOptions().sendWr(16).recvWr(RECEIVES));
             Link b = Link.connected(new QueueOptions().sendWr(16).recvWr(RECEIVES))) {
            Flow flowA = new Flow(a);
            Flow flowB = new Flow(b);
            CyclicBarrier start = new CyclicBarrier(2);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread t1 = worker("sends-a-receives-b", start, flowA, flowB, failure);
            Thread t2 = worker("sends-b-receives-a", start, flowB, flowA, failure);
            t1.start();
            t2.start();
            t1.join(TimeUnit.SECONDS.toMillis(120));
            t2.join(TimeUnit.SECONDS.toMillis(120));
            assertNull(failure.get(), () -> "a worker failed: " + failure.get());
            assertEquals(MESSAGES, flowA.received);
            assertEquals(MESSAGES, flowB.received);
            assertEquals(0, a.clientFabric.receiverNotReadyCount());
            assertEquals(0, b.clientFabric.receiverNotReadyCount());
        }
    }

    private static Thread worker(String name, CyclicBarrier start, Flow sending, Flow receiving,
                                 AtomicReference<Throwable> failure) {
        return new Thread(() -> {
            try {
                start.await(30, TimeUnit.SECONDS);
                // Bounded: far more rounds than the traffic needs, even with the other thread descheduled.
                for (long round = 0; round < 200_000_000L && !(sending.done() && receiving.received == MESSAGES);
                     round++) {
                    if (failure.get() != null) {
                        return;
                    }
                    boolean progress = sending.send();
                    progress |= receiving.receive();
                    if (!progress) {
                        Thread.onSpinWait();
                    }
                }
                if (!sending.done() || receiving.received != MESSAGES) {
                    throw new AssertionError(name + " ran out of rounds: sent " + sending.sent + ", received "
                        + receiving.received);
                }
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        }, name);
    }
}
