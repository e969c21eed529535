package io.rdmanio.core.fabric.loopback;

import static io.rdmanio.core.fabric.QueuePair.SIGNALED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmEvent;
import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class LoopbackNotificationTest {

    /** A notifier that counts its calls and opens a latch, with a thread waiting on the latch. */
    private static final class Waiter {
        final AtomicInteger calls = new AtomicInteger();
        final CountDownLatch fired = new CountDownLatch(1);
        final AtomicBoolean woke = new AtomicBoolean();
        final Thread thread = new Thread(() -> {
            try {
                woke.set(fired.await(30, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "notification-waiter");

        Waiter() {
            thread.start();
        }

        void signal() {
            calls.incrementAndGet();
            fired.countDown();
        }

        void assertWokeOnce() throws InterruptedException {
            thread.join(TimeUnit.SECONDS.toMillis(30));
            assertTrue(woke.get(), "the waiting thread was woken");
            assertEquals(1, calls.get(), "the notifier ran exactly once");
        }
    }

    @Test
    void armedReceiveQueueFiresOnceWhenASendArrives() throws Exception {
        try (Link link = Link.connected()) {
            Waiter waiter = new Waiter();
            link.serverRecvCq.requestNotify(waiter::signal);
            assertEquals(0, waiter.calls.get(), "nothing pending, nothing fired");
            link.clientQp.postSend(1, link.clientMr, 0, 8, 0);
            waiter.assertWokeOnce();
            link.clientQp.postSend(2, link.clientMr, 0, 8, 0);
            assertEquals(2, link.poll(link.serverRecvCq));
            assertEquals(1, waiter.calls.get(), "one-shot: not fired again without arming");
        }
    }

    @Test
    void armingWithCompletionsPendingFiresAtOnce() throws Exception {
        try (Link link = Link.connected()) {
            link.clientQp.postSend(1, link.clientMr, 0, 8, SIGNALED);
            assertEquals(1, link.poll(link.serverRecvCq));
            Waiter waiter = new Waiter();
            link.clientSendCq.requestNotify(waiter::signal);
            waiter.assertWokeOnce();
        }
    }

    @Test
    void armedSendQueueFiresForASignaledRequest() throws Exception {
        try (Link link = Link.connected()) {
            Waiter waiter = new Waiter();
            link.clientSendCq.requestNotify(waiter::signal);
            link.clientQp.postSend(1, link.clientMr, 0, 8, SIGNALED);
            waiter.assertWokeOnce();
            assertEquals(1, link.poll(link.clientSendCq));
        }
    }

    @Test
    void eventChannelFiresOnceForAConnectRequest() throws Exception {
        try (Link link = Link.unconnected(new Link.Options())) {
            Waiter waiter = new Waiter();
            link.serverEvents.requestNotify(waiter::signal);
            link.client.connect(link.listener.localAddress(), null);
            waiter.assertWokeOnce();
            Link.expect(link.serverEvents, CmEvent.Type.CONNECT_REQUEST);
        }
    }

    @Test
    void disconnectWakesAnArmedEventChannel() throws Exception {
        try (Link link = Link.connected()) {
            Waiter waiter = new Waiter();
            link.clientEvents.requestNotify(waiter::signal);
            link.server.disconnect();
            waiter.assertWokeOnce();
        }
    }
}
