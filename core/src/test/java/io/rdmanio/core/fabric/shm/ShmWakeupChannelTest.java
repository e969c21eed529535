package io.rdmanio.core.fabric.shm;

import static io.rdmanio.core.fabric.shm.ShmTestSupport.pollExactly;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.fabric.Notifier;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A completion queue's wakeup pipe: a selector that watches it is woken by the peer's ring itself (one hop: the
 * fabric's watcher never runs the notifier for it), its readiness is consumed by the next arm, a waiter that relies
 * on the fabric still gets the watcher's notifier, and a peer cannot make this process write into anything but a
 * pipe.
 */
class ShmWakeupChannelTest extends WithShmDirectory {

    @Test
    void aWatchingSelectorIsWokenByThePeersRingAndTheWatcherStaysOut() throws Exception {
        Assumptions.assumeTrue(ShmNatives.available(), "no librdmanio-shm: " + ShmNatives.unavailableReason());
        try (ShmPair pair = ShmPair.connected(dir, 8, 4, 64);
             Selector selector = ShmWatcher.jdkProvider().openSelector()) {
            SelectableChannel wakeup = pair.serverRecvCq.wakeupChannel();
            assertNotNull(wakeup, "a completion queue offers its wakeup pipe");
            wakeup.register(selector, SelectionKey.OP_READ);
            Completions out = new Completions(8);
            AtomicInteger notified = new AtomicInteger();
            Notifier counting = notified::incrementAndGet;

            for (int round = 0; round < 3; round++) {
                pair.serverRecvCq.requestNotify(counting, true);
                assertEquals(0, selector.selectNow(), "round " + round + ": no readiness left from before");
                pair.clientQp.postSend(round, pair.clientMr, 0, 32, QueuePair.SIGNALED);
                assertEquals(1, selector.select(TimeUnit.SECONDS.toMillis(20)), "round " + round + ": woken");
                selector.selectedKeys().clear();
                // The byte woke the selector; nobody ran the notifier (the watcher would have, on a relayed arm).
                assertEquals(0, notified.get(), "round " + round + ": the watcher stayed out");
                pollExactly(pair.serverRecvCq, out, 1);
                assertEquals(Completions.SUCCESS, out.status[0]);
                pollExactly(pair.clientSendCq, out, 1);
                pair.serverQp.postRecv(1000 + round, pair.serverMr, 0, 64);
            }

            // A waiter that relies on the fabric (a blocked thread): the watcher runs its notifier.
            CountDownLatch relayed = new CountDownLatch(1);
            AtomicReference<String> on = new AtomicReference<>();
            pair.serverRecvCq.requestNotify(() -> {
                on.set(Thread.currentThread().getName());
                relayed.countDown();
            }, false);
            assertEquals(0, selector.selectNow(), "the last watched ring was consumed by this arm");
            pair.clientQp.postSend(9, pair.clientMr, 0, 32, QueuePair.SIGNALED);
            assertTrue(relayed.await(20, TimeUnit.SECONDS), "the relayed notifier ran");
            assertTrue(on.get().startsWith("rdmanio-shm-watcher"), on.get());
            pollExactly(pair.serverRecvCq, out, 1);
            assertEquals(Completions.SUCCESS, out.status[0]);
        }
    }

    @Test
    void aByteWrittenAfterAWatchedArmsReadIsReadByTheNextWatchedArm() throws Exception {
        Assumptions.assumeTrue(ShmNatives.available(), "no librdmanio-shm: " + ShmNatives.unavailableReason());
        try (ShmPair pair = ShmPair.connected(dir, 8, 4, 64);
             Selector selector = ShmWatcher.jdkProvider().openSelector()) {
            ShmCompletionQueue cq = (ShmCompletionQueue) pair.serverRecvCq;
            cq.wakeupChannel().register(selector, SelectionKey.OP_READ);
            Notifier none = () -> { };
            // A producer takes a watched arm and writes its byte only after the next arm's read, with the flag set
            // again since (as a peer descheduled between taking the arm and ringing would).
            cq.requestNotify(none, true);
            assertEquals(ShmReadyMapDescriptor.ARMED_WATCHED, ShmReadyMapDescriptor.tryDisarm(cq.map), "taken");
            cq.requestNotify(none, true);
            assertEquals(0, selector.selectNow(), "nothing written yet");
            int writer = ShmNatives.openPipeWriter(
                ShmHost.descriptorPath(ProcessHandle.current().pid(), ShmReadyMapDescriptor.wakeupFd(cq.map)));
            try {
                assertEquals(0, ShmNatives.ring(writer));
            } finally {
                ShmNatives.close(writer);
            }
            assertEquals(1, selector.selectNow(), "the late byte is there");
            selector.selectedKeys().clear();
            cq.requestNotify(none, true);
            // Left in the pipe, it would make every select return at once while nothing completes: a busy loop.
            assertEquals(0, selector.selectNow(), "the next watched arm read it");
            selector.selectedKeys().clear();
        }
    }

    @Test
    void turnedOffThereIsNoWakeupChannel() throws IOException {
        try (ShmFabric fabric = (ShmFabric) Fabrics.open("shm", Map.of(ShmFabricProvider.DIR, dir.toString(),
            ShmFabricProvider.WAKEUP_CHANNEL, "false"))) {
            assertNull(fabric.createCompletionQueue(8).wakeupChannel());
        }
        IOException bad = assertThrows(IOException.class, () -> Fabrics.open("shm",
            Map.of(ShmFabricProvider.DIR, dir.toString(), ShmFabricProvider.WAKEUP_CHANNEL, "yes")));
        assertTrue(bad.getMessage().contains("rdmanio.shm.wakeupChannel must be true or false"), bad.getMessage());
    }

    @Test
    void aPeerNamingAnythingButAPipeAsItsWakeupIsNotWrittenTo() throws IOException {
        Assumptions.assumeTrue(ShmNatives.available(), "no librdmanio-shm: " + ShmNatives.unavailableReason());
        int memfd = ShmNatives.createSealed("rdmanio-not-a-pipe", 4096);
        try {
            IOException e = assertThrows(IOException.class, () -> ShmNatives.openPipeWriter(
                ShmHost.descriptorPath(ProcessHandle.current().pid(), memfd)));
            assertTrue(e.getMessage().contains("not a pipe"), e.getMessage());
        } finally {
            ShmNatives.close(memfd);
        }
    }
}
