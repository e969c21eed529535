package io.rdmanio.core.fabric.disni;

import static io.rdmanio.core.fabric.disni.Rdma.await;
import static io.rdmanio.core.fabric.disni.Rdma.awaitCompletions;
import static io.rdmanio.core.fabric.disni.Rdma.next;
import static io.rdmanio.core.fabric.disni.Rdma.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The disni fabric on a real verbs device (soft-RoCE in the test VM), beyond what {@link DisniSpiConformanceTest}
 * checks on every fabric: a wildcard listener bound to the device's address, sends of up to a slot (64 KiB) in
 * order, an error that ends one connection only, posting and polling without allocation, and the completion
 * thread and wakeup channel. Skipped where no RDMA device exists.
 */
class DisniFabricTest {

    static final int SLOT = 65536;
    static final int SLOTS = 8;

    static DisniFabric fabric;
    static InetAddress address;

    @BeforeAll
    static void open() throws IOException {
        Rdma.assumeDevice();
        fabric = (DisniFabric) Fabrics.open("disni", Map.of());
        address = fabric.deviceAddress();
    }

    @AfterAll
    static void close() throws IOException {
        if (fabric != null) {
            fabric.close();
        }
    }

    /** A listener with its own event channel. */
    static final class Server implements AutoCloseable {
        final EventChannel events;
        final CmId listener;

        Server(InetSocketAddress at) throws IOException {
            events = fabric.createEventChannel();
            listener = fabric.createId(events);
            listener.bind(at);
            listener.listen(8);
        }

        @Override
        public void close() {
            listener.close();
            events.close();
        }
    }

    /** One side of a connection: id, queue pair, one completion queue, receive and send memory. */
    static final class Side implements AutoCloseable {
        final EventChannel events;
        final CmId id;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemoryRegion recv;
        final MemoryRegion send;

        /** Active side. */
        Side() throws IOException {
            this(null, null);
        }

        /** Passive side on a request's id. */
        Side(EventChannel events, CmId id) throws IOException {
            this.events = events == null ? fabric.createEventChannel() : events;
            this.id = id == null ? fabric.createId(this.events) : id;
            cq = fabric.createCompletionQueue(256);
            qp = this.id.createQueuePair(new QueuePair.Config(cq, cq, 64, SLOTS, 0));
            recv = fabric.allocate(SLOTS * SLOT, MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_WRITE);
            send = fabric.allocate(SLOTS * SLOT, 0);
            for (int s = 0; s < SLOTS; s++) {
                qp.postRecv(s, recv, s * SLOT, SLOT);
            }
        }

        @Override
        public void close() {
            id.close();
            cq.close();
            recv.close();
            send.close();
        }
    }

    /** A connected pair. */
    static final class Link implements AutoCloseable {
        final Server server;
        final Side client;
        final Side accepted;

        Link() throws Exception {
            server = new Server(new InetSocketAddress(address, 0));
            client = new Side();
            client.id.connect(server.listener.localAddress(), text("hello"));
            CmEvent request = await(server.events, CmEvent.Type.CONNECT_REQUEST);
            accepted = new Side(server.events, request.id());
            accepted.id.accept(text("welcome"));
            await(server.events, CmEvent.Type.ESTABLISHED);
            await(client.events, CmEvent.Type.ESTABLISHED);
        }

        @Override
        public void close() {
            client.close();
            accepted.close();
            server.close();
        }
    }

    static void fill(MemoryRegion r, int offset, int length, int seed) {
        ByteBuffer b = r.buffer();
        for (int i = 0; i < length; i++) {
            b.put(offset + i, (byte) (seed * 31 + i * 7 + (i >>> 8)));
        }
    }

    static void check(MemoryRegion r, int offset, int length, int seed) {
        ByteBuffer b = r.buffer();
        for (int i = 0; i < length; i++) {
            byte expected = (byte) (seed * 31 + i * 7 + (i >>> 8));
            if (b.get(offset + i) != expected) {
                throw new AssertionError("byte " + i + " of message " + seed + " is " + b.get(offset + i)
                    + ", expected " + expected);
            }
        }
    }

    @Test
    void privateDataTravelsBothWaysAndAWildcardListenerBindsTheDeviceAddress() throws Exception {
        try (Server server = new Server(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0));
             Side client = new Side()) {
            assertEquals(address, server.listener.localAddress().getAddress());
            assertNotEquals(0, server.listener.localAddress().getPort());
            client.id.connect(server.listener.localAddress(), text("a request of 21 bytes"));
            CmEvent request = await(server.events, CmEvent.Type.CONNECT_REQUEST);
            assertSame(server.listener, request.listenId());
            assertEquals("a request of 21 bytes", text(request.privateData()));
            assertTrue(request.privateData().isReadOnly());
            try (Side accepted = new Side(server.events, request.id())) {
                accepted.id.accept(text("accepted, with 56 bytes of private data, the most there is"
                    .substring(0, 56)));
                assertSame(accepted.id, await(server.events, CmEvent.Type.ESTABLISHED).id());
                CmEvent established = await(client.events, CmEvent.Type.ESTABLISHED);
                assertSame(client.id, established.id());
                assertEquals("accepted, with 56 bytes of private data, the most there is".substring(0, 56),
                    text(established.privateData()));
                assertEquals(client.id.localAddress(), accepted.id.remoteAddress());
                assertEquals(server.listener.localAddress(), client.id.remoteAddress());
            }
        }
    }

    @Test
    void sendsArriveByteExactInOrderAndOnlySignaledSendsComplete() throws Exception {
        try (Link link = new Link()) {
            int[] sizes = {1, 7, 64, 1000, 4096, SLOT};
            for (int m = 0; m < sizes.length; m++) {
                fill(link.client.send, m * SLOT % (SLOTS * SLOT), sizes[m], m);
            }
            for (int m = 0; m < sizes.length; m++) {
                int flags = m == sizes.length - 1 ? QueuePair.SIGNALED : 0;
                link.client.qp.postSend(100 + m, link.client.send, m * SLOT, sizes[m], flags);
            }
            Completions sent = awaitCompletions(link.client.cq, 1);
            assertEquals(100 + sizes.length - 1, sent.wrId[0]);
            assertEquals(Completions.SUCCESS, sent.status[0]);
            assertEquals(Completions.OP_SEND, sent.opcode[0]);
            Completions got = awaitCompletions(link.accepted.cq, sizes.length);
            for (int m = 0; m < sizes.length; m++) {
                assertEquals(Completions.SUCCESS, got.status[m], Completions.statusName(got.status[m]));
                assertEquals(Completions.OP_RECV, got.opcode[m]);
                assertEquals(m, got.wrId[m]);
                assertEquals(sizes[m], got.byteLen[m]);
                assertEquals(link.accepted.qp.qpNum(), got.qpNum[m]);
                check(link.accepted.recv, m * SLOT, sizes[m], m);
            }
            assertEquals(0, fabric.receiverNotReadyCount());
        }
    }

    @Test
    void aFailedSendFailsThatConnectionOnly() throws Exception {
        try (Link bystander = new Link(); Link victim = new Link()) {
            // One byte more than the receive the peer posted: the responder refuses the message.
            victim.client.qp.postSend(9, victim.client.send, 0, SLOT + 1, QueuePair.SIGNALED);
            // The send fails; the queue pair enters the error state and the posted receives are flushed.
            Completions c = awaitCompletions(victim.client.cq, 1 + SLOTS);
            int sends = 0;
            int flushed = 0;
            for (int i = 0; i < c.count(); i++) {
                if (c.opcode[i] == Completions.OP_SEND) {
                    sends++;
                    assertEquals(9, c.wrId[i]);
                    assertTrue(c.status[i] == Completions.REM_ACCESS_ERR || c.status[i] == Completions.REM_INV_REQ_ERR
                        || c.status[i] == Completions.REM_OP_ERR, Completions.statusName(c.status[i]));
                } else {
                    assertEquals(Completions.OP_RECV, c.opcode[i]);
                    assertEquals(Completions.WR_FLUSH_ERR, c.status[i]);
                    assertEquals(flushed, c.wrId[i], "receives are flushed in the order they were posted");
                    flushed++;
                }
            }
            assertEquals(1, sends);
            assertEquals(SLOTS, flushed);
            assertTrue(victim.client.qp.isError());
            assertThrows(FabricException.class, () -> victim.client.qp.postSend(10, victim.client.send, 0, 1,
                QueuePair.SIGNALED));
            assertEquals(CmEvent.Type.DISCONNECTED, next(victim.client.events).type());
            assertEquals(CmEvent.Type.DISCONNECTED, next(victim.server.events).type());
            // The other connection carries on.
            fill(bystander.client.send, 0, 500, 5);
            bystander.client.qp.postSend(1, bystander.client.send, 0, 500, QueuePair.SIGNALED);
            assertEquals(Completions.SUCCESS, awaitCompletions(bystander.client.cq, 1).status[0]);
            Completions r = awaitCompletions(bystander.accepted.cq, 1);
            assertEquals(Completions.SUCCESS, r.status[0]);
            assertEquals(500, r.byteLen[0]);
            check(bystander.accepted.recv, 0, 500, 5);
            assertFalse(bystander.client.qp.isError());
        }
    }

    /** Posting and polling reuse DiSNI's stateful calls: a send/receive round costs no allocation. */
    @Test
    void postingAndPollingDoNotAllocate() throws Exception {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(mx instanceof com.sun.management.ThreadMXBean,
            "no per-thread allocation counter in this JVM");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) mx;
        try (Link link = new Link()) {
            Completions batch = new Completions(16);
            fill(link.client.send, 0, 256, 3);
            roundTrips(link, batch, 2_000);
            long before = threads.getCurrentThreadAllocatedBytes();
            roundTrips(link, batch, 5_000);
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            assertTrue(allocated < 16 * 1024, allocated + " bytes allocated by 5000 round trips");
        }
    }

    /** One signaled send, its receive completion and the repost, {@code n} times, polling without waiting. */
    private static void roundTrips(Link link, Completions batch, int n) throws IOException {
        long deadline = System.nanoTime() + Rdma.TIMEOUT_NANOS;
        for (int i = 0; i < n; i++) {
            link.client.qp.postSend(i, link.client.send, 0, 256, QueuePair.SIGNALED);
            int sent = 0;
            int received = 0;
            while (sent == 0 || received == 0) {
                if (link.client.cq.poll(batch) > 0) {
                    if (batch.status[0] != Completions.SUCCESS) {
                        throw new AssertionError("send failed: " + Completions.statusName(batch.status[0]));
                    }
                    sent++;
                }
                if (link.accepted.cq.poll(batch) > 0) {
                    if (batch.status[0] != Completions.SUCCESS || batch.byteLen[0] != 256) {
                        throw new AssertionError("receive failed: " + Completions.statusName(batch.status[0]));
                    }
                    link.accepted.qp.postRecv(batch.wrId[0], link.accepted.recv, (int) batch.wrId[0] * SLOT, SLOT);
                    received++;
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("round trip " + i + " did not complete");
                }
            }
        }
    }

    /** With nothing armed and no connection being set up, the completion thread parks: no timed wake-ups. */
    @Test
    void anIdleFabricHasNoBusyThread() throws Exception {
        try (Link link = new Link()) {
            Thread cq = null;
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().equals("rdmanio-disni-cq")) {
                    cq = t;
                }
            }
            org.junit.jupiter.api.Assertions.assertNotNull(cq, "the fabric's completion thread");
            long deadline = System.nanoTime() + Rdma.TIMEOUT_NANOS;
            while (cq.getState() != Thread.State.WAITING) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("the completion thread is " + cq.getState() + " while idle");
                }
                Thread.onSpinWait();
            }
            // Arming wakes it; a completion fires the notifier; then it parks again.
            java.util.concurrent.Semaphore fired = new java.util.concurrent.Semaphore(0);
            link.accepted.cq.requestNotify(fired::release);
            link.client.qp.postSend(1, link.client.send, 0, 10, QueuePair.SIGNALED);
            assertTrue(fired.tryAcquire(60, java.util.concurrent.TimeUnit.SECONDS), "the armed queue was not notified");
            assertEquals(1, awaitCompletions(link.accepted.cq, 1).count());
            awaitCompletions(link.client.cq, 1);
            while (cq.getState() != Thread.State.WAITING) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("the completion thread is " + cq.getState() + " after the wake-up");
                }
                Thread.onSpinWait();
            }
        }
    }

    /**
     * A queue armed for a watcher of its wakeup channel wakes that watcher's own JDK selector when a completion
     * arrives; the fabric's completion thread stays parked, and the poll after the wakeup consumes the readiness.
     */
    @Test
    void aWatchedQueueWakesItsWatchersSelectorWhileTheCompletionThreadStaysParked() throws Exception {
        assertTrue(fabric.hasWakeupChannel(), "the fabric has no wakeup channel (see its debug log for why)");
        try (Link link = new Link(); java.nio.channels.Selector selector = java.nio.channels.Selector.open()) {
            java.nio.channels.SelectableChannel wakeup = link.accepted.cq.wakeupChannel();
            org.junit.jupiter.api.Assertions.assertNotNull(wakeup);
            assertSame(wakeup, link.client.cq.wakeupChannel(), "one completion channel serves every queue");
            assertFalse(wakeup.isBlocking());
            wakeup.register(selector, java.nio.channels.SelectionKey.OP_READ);
            Thread cq = completionThread();
            awaitParked(cq);
            long wakeups = fabric.completionThreadWakeups();

            java.util.concurrent.atomic.AtomicInteger fired = new java.util.concurrent.atomic.AtomicInteger();
            link.accepted.cq.requestNotify(fired::incrementAndGet, true);
            fill(link.client.send, 0, 1000, 5);
            link.client.qp.postSend(7, link.client.send, 0, 1000, 0);
            // Nothing polls before the select: the event stays pending (level-triggered) however early it came.
            assertEquals(1, selector.select(TimeUnit.NANOSECONDS.toMillis(Rdma.TIMEOUT_NANOS)),
                "the completion did not make the wakeup channel readable");
            selector.selectedKeys().clear();
            assertEquals(0, fired.get(), "the notifier ran although nobody polled");
            Completions got = new Completions(4);
            assertEquals(1, link.accepted.cq.poll(got));
            assertEquals(Completions.SUCCESS, got.status[0], Completions.statusName(got.status[0]));
            assertEquals(1000, got.byteLen[0]);
            check(link.accepted.recv, (int) got.wrId[0] * SLOT, 1000, 5);
            assertEquals(1, fired.get(), "the armed queue's notifier runs once, in the poll that took the completion");
            assertEquals(wakeups, fabric.completionThreadWakeups(), "the completion thread woke for a watched queue");
            assertEquals(Thread.State.WAITING, cq.getState());
            // The poll consumed the readiness: nothing is left to wake the selector.
            assertEquals(0, selector.selectNow());
        }
    }

    static Thread completionThread() {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("rdmanio-disni-cq")) {
                return t;
            }
        }
        throw new AssertionError("the fabric's completion thread is not running");
    }

    static void awaitParked(Thread t) {
        long deadline = System.nanoTime() + Rdma.TIMEOUT_NANOS;
        while (t.getState() != Thread.State.WAITING) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("the completion thread is " + t.getState() + " while nothing is armed");
            }
            Thread.onSpinWait();
        }
    }
}
