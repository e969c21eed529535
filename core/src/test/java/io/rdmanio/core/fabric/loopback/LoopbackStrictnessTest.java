package io.rdmanio.core.fabric.loopback;

import static io.rdmanio.core.fabric.Completions.LOC_PROT_ERR;
import static io.rdmanio.core.fabric.Completions.OP_SEND;
import static io.rdmanio.core.fabric.Completions.SUCCESS;
import static io.rdmanio.core.fabric.QueuePair.SIGNALED;
import static io.rdmanio.core.fabric.loopback.Link.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.testsupport.QueueOptions;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * The rules of the model where hardware would fail that the conformance suite ({@link LoopbackSpiConformanceTest})
 * does not check on every fabric: queue depths, completion queue overrun, a region deregistered while a request
 * that names it is still to be carried out.
 */
class LoopbackStrictnessTest {

    /** Checks that the connection ended: both queue pairs in error, DISCONNECTED on both sides. */
    private static void assertConnectionEnded(Link link) throws IOException {
        assertTrue(link.clientQp.isError(), "client queue pair in error");
        assertTrue(link.serverQp.isError(), "server queue pair in error");
        expect(link.clientEvents, CmEvent.Type.DISCONNECTED);
        expect(link.serverEvents, CmEvent.Type.DISCONNECTED);
    }

    @Test
    void sendQueueFullThrowsAndOnlyPolledCompletionsFreeSlots() throws IOException {
        try (Link link = Link.connected(new QueueOptions().sendWr(4).serverReceives(16, 64))) {
            for (int i = 0; i < 4; i++) {
                link.clientQp.postSend(i, link.clientMr, 0, 8, 0);
            }
            FabricException full = assertThrows(FabricException.class,
                () -> link.clientQp.postSend(9, link.clientMr, 0, 8, SIGNALED));
            assertTrue(full.getMessage().startsWith("send queue full"), full.getMessage());
            // Delivered, but never signaled: the slots stay taken, as on hardware.
            assertEquals(4, link.poll(link.serverRecvCq));
            assertEquals(0, link.poll(link.clientSendCq));
            assertThrows(FabricException.class, () -> link.clientQp.postSend(9, link.clientMr, 0, 8, SIGNALED));
            link.client.disconnect();
        }
        try (Link link = Link.connected(new QueueOptions().sendWr(4).serverReceives(16, 64))) {
            for (int i = 0; i < 3; i++) {
                link.clientQp.postSend(i, link.clientMr, 0, 8, 0);
            }
            link.clientQp.postSend(3, link.clientMr, 0, 8, SIGNALED);
            assertThrows(FabricException.class, () -> link.clientQp.postSend(4, link.clientMr, 0, 8, SIGNALED));
            link.expectOne(link.clientSendCq, SUCCESS, OP_SEND);
            // A signaled completion frees its slot and those of the unsignaled requests before it.
            for (int i = 0; i < 4; i++) {
                link.clientQp.postSend(10 + i, link.clientMr, 0, 8, i == 3 ? SIGNALED : 0);
            }
            assertEquals(8, link.poll(link.serverRecvCq));
        }
    }

    @Test
    void receiveQueueFullThrows() throws IOException {
        try (Link link = Link.connected(new QueueOptions().recvWr(3).serverReceives(3, 64))) {
            FabricException e = assertThrows(FabricException.class,
                () -> link.serverQp.postRecv(9, link.serverMr, 0, 64));
            assertTrue(e.getMessage().startsWith("receive queue full"), e.getMessage());
            link.clientQp.postSend(1, link.clientMr, 0, 8, 0);
            assertEquals(1, link.poll(link.serverRecvCq));
            link.serverQp.postRecv(9, link.serverMr, 0, 64);
        }
    }

    @Test
    void completionQueueOverrunFailsEveryQueuePairOnIt() throws IOException {
        try (Link link = Link.connected(new QueueOptions().cqEntries(3).recvWr(8).serverReceives(8, 64))) {
            for (int i = 0; i < 4; i++) {
                link.clientQp.postSend(i, link.clientMr, 0, 8, 0);
            }
            FabricException e = assertThrows(FabricException.class, () -> link.poll(link.serverRecvCq));
            assertTrue(e.getMessage().startsWith("completion queue overrun"), e.getMessage());
            assertConnectionEnded(link);
            assertThrows(FabricException.class, () -> link.poll(link.serverRecvCq), "the overrun is sticky");
        }
    }

    @Test
    void aRegionDeregisteredBetweenPostAndExecutionIsStillCaught() throws IOException {
        // The loopback fabric carries a request out after its post returns (it reads the payload then): the region
        // is checked then too.
        try (Link link = Link.connected()) {
            MemoryRegion extra = link.clientFabric.register(ByteBuffer.allocateDirect(64), MemoryRegion.LOCAL_WRITE);
            link.clientQp.postSend(2, extra, 0, 8, SIGNALED);
            extra.close();
            link.expectOne(link.clientSendCq, LOC_PROT_ERR, OP_SEND);
            assertConnectionEnded(link);
        }
    }
}
