package io.rdmanio.core.fabric.loopback;

import static io.rdmanio.core.fabric.Completions.OP_RECV;
import static io.rdmanio.core.fabric.Completions.OP_SEND;
import static io.rdmanio.core.fabric.Completions.REM_OP_ERR;
import static io.rdmanio.core.fabric.Completions.RNR_RETRY_EXC_ERR;
import static io.rdmanio.core.fabric.Completions.SUCCESS;
import static io.rdmanio.core.fabric.Completions.WR_FLUSH_ERR;
import static io.rdmanio.core.fabric.QueuePair.SIGNALED;
import static io.rdmanio.core.fabric.loopback.Link.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.testsupport.QueueOptions;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class LoopbackFaultsTest {

    @Test
    void heldCompletionsWaitForReleaseKeepOrderAndReadThePayloadWhenReleased() throws IOException {
        try (Link link = Link.connected(new QueueOptions().serverReceives(4, 64))) {
            LoopbackFaults faults = link.clientFabric.faults();
            faults.holdCompletions();
            for (int i = 0; i < 3; i++) {
                link.fill(link.clientMr, i * 64, 64, i);
                link.clientQp.postSend(i, link.clientMr, i * 64, 64, SIGNALED);
            }
            assertEquals(0, link.poll(link.clientSendCq));
            assertEquals(0, link.poll(link.serverRecvCq));
            AtomicInteger fired = new AtomicInteger();
            link.serverRecvCq.requestNotify(fired::incrementAndGet);
            assertEquals(0, fired.get(), "held work does not count as pending");
            link.fill(link.clientMr, 0, 64, 50);
            assertEquals(2, faults.releaseCompletions(2));
            assertEquals(1, fired.get(), "releasing adds completions, which wakes the armed queue");
            assertEquals(2, link.poll(link.serverRecvCq));
            assertEquals(1000, link.out.wrId[0]);
            assertEquals(1001, link.out.wrId[1]);
            link.assertFilled(link.serverMr, 0, 64, 50);
            link.assertFilled(link.serverMr, 64, 64, 1);
            assertEquals(0, link.poll(link.serverRecvCq), "still holding");
            assertEquals(1, faults.releaseAll());
            assertEquals(3, link.poll(link.clientSendCq));
            for (int i = 0; i < 3; i++) {
                assertEquals(i, link.out.wrId[i]);
                assertEquals(SUCCESS, link.out.status[i]);
            }
            faults.resume();
            link.clientQp.postSend(9, link.clientMr, 0, 8, SIGNALED);
            assertEquals(1, link.poll(link.clientSendCq));
        }
    }

    /** Polls until {@code count} completions came through {@link Link#clientSendCq}; the sizes per poll. */
    private static List<Integer> drainRandomly(long seed) throws IOException {
        try (Link link = Link.connected(new QueueOptions().serverReceives(10, 64))) {
            LoopbackFaults faults = link.clientFabric.faults();
            faults.seed(seed);
            faults.releaseRandomly(0.3);
            for (int i = 0; i < 10; i++) {
                link.clientQp.postSend(i, link.clientMr, 0, 8, SIGNALED);
            }
            List<Integer> sizes = new ArrayList<>();
            long next = 0;
            for (int polls = 0; next < 10 && polls < 10_000; polls++) {
                int n = link.poll(link.clientSendCq);
                sizes.add(n);
                for (int k = 0; k < n; k++) {
                    assertEquals(next++, link.out.wrId[k], "per queue pair order");
                    assertEquals(SUCCESS, link.out.status[k]);
                }
            }
            assertEquals(10, next, "every request completed");
            assertEquals(10, link.poll(link.serverRecvCq));
            return sizes;
        }
    }

    @Test
    void randomReleaseKeepsOrderAndIsDeterministicForASeed() throws IOException {
        List<Integer> first = drainRandomly(42);
        assertTrue(first.size() > 1, "some polls were held: " + first);
        assertEquals(first, drainRandomly(42));
    }

    @Test
    void batchedCompletionsComeInWholeBatchesOrOnRelease() throws IOException {
        try (Link link = Link.connected(new QueueOptions().serverReceives(8, 64))) {
            LoopbackFaults faults = link.clientFabric.faults();
            faults.batchCompletions(3);
            link.clientQp.postSend(0, link.clientMr, 0, 8, SIGNALED);
            link.clientQp.postSend(1, link.clientMr, 0, 8, SIGNALED);
            assertEquals(0, link.poll(link.clientSendCq));
            assertEquals(0, link.poll(link.serverRecvCq));
            link.clientQp.postSend(2, link.clientMr, 0, 8, SIGNALED);
            link.clientQp.postSend(3, link.clientMr, 0, 8, SIGNALED);
            assertEquals(3, link.poll(link.clientSendCq));
            assertEquals(3, link.poll(link.serverRecvCq));
            assertEquals(0, link.poll(link.clientSendCq));
            assertEquals(1, faults.releaseAll());
            link.expectOne(link.clientSendCq, SUCCESS, OP_SEND);
            assertEquals(3, link.out.wrId[0]);
        }
    }

    @Test
    void injectedCompletionErrorHitsTheNthRequestAndEndsTheConnection() throws IOException {
        try (Link link = Link.connected()) {
            link.clientFabric.faults().failWorkRequest(link.clientQp.qpNum(), 2, REM_OP_ERR);
            for (int i = 0; i < 3; i++) {
                link.clientQp.postSend(i, link.clientMr, 0, 8, SIGNALED);
            }
            assertEquals(3, link.poll(link.clientSendCq));
            assertEquals(SUCCESS, link.out.status[0]);
            assertEquals(REM_OP_ERR, link.out.status[1]);
            assertEquals(1, link.out.wrId[1]);
            assertEquals(WR_FLUSH_ERR, link.out.status[2]);
            expect(link.clientEvents, CmEvent.Type.DISCONNECTED);
            expect(link.serverEvents, CmEvent.Type.DISCONNECTED);
            assertTrue(link.serverQp.isError());
        }
        try (Link link = Link.connected()) {
            link.clientFabric.faults().failWorkRequest(LoopbackFaults.ANY_QP, 1, REM_OP_ERR);
            link.clientQp.postSend(7, link.clientMr, 0, 8, 0);
            link.expectOne(link.clientSendCq, REM_OP_ERR, OP_SEND);
            assertEquals(7, link.out.wrId[0]);
            assertThrows(IllegalArgumentException.class,
                () -> link.clientFabric.faults().failWorkRequest(LoopbackFaults.ANY_QP, 1, SUCCESS));
        }
    }

    @Test
    void droppedConnectionDisconnectsBothSidesAndFlushes() throws IOException {
        try (Link link = Link.connected(new QueueOptions().serverReceives(2, 64))) {
            link.clientFabric.faults().holdCompletions();
            link.clientQp.postSend(1, link.clientMr, 0, 8, 0);
            link.serverFabric.faults().dropConnection(link.serverQp.qpNum());
            CmEvent event = expect(link.clientEvents, CmEvent.Type.DISCONNECTED);
            assertTrue(event.reason().contains("dropped"), event.reason());
            expect(link.serverEvents, CmEvent.Type.DISCONNECTED);
            link.expectOne(link.clientSendCq, WR_FLUSH_ERR, OP_SEND);
            assertEquals(2, link.poll(link.serverRecvCq));
            assertEquals(WR_FLUSH_ERR, link.out.status[1]);
            assertThrows(FabricException.class, () -> link.clientFabric.faults().dropConnection(123456789));
        }
    }

    @Test
    void frozenReceivesAreWithheldUntilThawed() throws IOException {
        try (Link link = Link.connected(new QueueOptions().serverReceives(0, 64))) {
            LoopbackFaults faults = link.serverFabric.faults();
            faults.freezeReceives(link.serverQp.qpNum());
            link.serverQp.postRecv(1, link.serverMr, 0, 64);
            link.serverQp.postRecv(2, link.serverMr, 64, 64);
            faults.thawReceives(link.serverQp.qpNum());
            link.clientQp.postSend(1, link.clientMr, 0, 8, 0);
            link.expectOne(link.serverRecvCq, SUCCESS, OP_RECV);
            assertEquals(1, link.out.wrId[0], "withheld receives keep their order");
        }
        try (Link link = Link.connected(new QueueOptions().serverReceives(0, 64))) {
            link.serverFabric.faults().freezeReceives(link.serverQp.qpNum());
            link.serverQp.postRecv(1, link.serverMr, 0, 64);
            link.clientQp.postSend(1, link.clientMr, 0, 8, SIGNALED);
            link.expectOne(link.clientSendCq, RNR_RETRY_EXC_ERR, OP_SEND);
            link.expectOne(link.serverRecvCq, WR_FLUSH_ERR, OP_RECV);
            expect(link.serverEvents, CmEvent.Type.DISCONNECTED);
        }
    }
}
