package io.rdmanio.core.fabric.loopback;

import static io.rdmanio.core.fabric.Completions.LOC_LEN_ERR;
import static io.rdmanio.core.fabric.Completions.LOC_PROT_ERR;
import static io.rdmanio.core.fabric.Completions.OP_RDMA_WRITE;
import static io.rdmanio.core.fabric.Completions.OP_RECV;
import static io.rdmanio.core.fabric.Completions.OP_SEND;
import static io.rdmanio.core.fabric.Completions.REM_ACCESS_ERR;
import static io.rdmanio.core.fabric.Completions.REM_INV_REQ_ERR;
import static io.rdmanio.core.fabric.Completions.SUCCESS;
import static io.rdmanio.core.fabric.Completions.WR_FLUSH_ERR;
import static io.rdmanio.core.fabric.QueuePair.SIGNALED;
import static io.rdmanio.core.fabric.loopback.Link.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.MemoryRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** One test per rule of the model where hardware would fail. */
class LoopbackStrictnessTest {

    /** Checks that the connection ended: both queue pairs in error, DISCONNECTED on both sides. */
    private static void assertConnectionEnded(Link link) throws IOException {
        assertTrue(link.clientQp.isError(), "client queue pair in error");
        assertTrue(link.serverQp.isError(), "server queue pair in error");
        expect(link.clientEvents, CmEvent.Type.DISCONNECTED);
        expect(link.serverEvents, CmEvent.Type.DISCONNECTED);
    }

    @Test
    void sendLargerThanThePostedReceiveFailsBothSides() throws IOException {
        try (Link link = Link.connected(new Link.Options().serverReceives(2, 100))) {
            link.clientQp.postSend(1, link.clientMr, 0, 101, SIGNALED);
            assertEquals(2, link.poll(link.serverRecvCq));
            assertEquals(LOC_LEN_ERR, link.out.status[0]);
            assertEquals(1000, link.out.wrId[0]);
            assertEquals(WR_FLUSH_ERR, link.out.status[1]);
            assertEquals(1001, link.out.wrId[1]);
            link.expectOne(link.clientSendCq, REM_INV_REQ_ERR, OP_SEND);
            assertConnectionEnded(link);
        }
    }

    @Test
    void sendFromOutsideTheRegionIsALocalProtectionErrorCompletion() throws IOException {
        try (Link link = Link.connected()) {
            link.clientQp.postSend(5, link.clientMr, Link.REGION - 10, 11, SIGNALED);
            link.clientQp.postSend(6, link.clientMr, 0, 1, SIGNALED);
            assertEquals(2, link.poll(link.clientSendCq));
            assertEquals(LOC_PROT_ERR, link.out.status[0]);
            assertEquals(5, link.out.wrId[0]);
            assertEquals(WR_FLUSH_ERR, link.out.status[1]);
            assertConnectionEnded(link);
            assertEquals(4, link.poll(link.serverRecvCq));
            assertEquals(WR_FLUSH_ERR, link.out.status[0], "nothing was delivered");
        }
    }

    @Test
    void sendFromAnotherFabricsRegionIsALocalProtectionError() throws IOException {
        try (Link link = Link.connected()) {
            link.clientQp.postSend(5, link.serverMr, 0, 10, 0);
            link.expectOne(link.clientSendCq, LOC_PROT_ERR, OP_SEND);
            assertConnectionEnded(link);
        }
    }

    @Test
    void writeWithAWrongRkeyIsARemoteAccessError() throws IOException {
        try (Link link = Link.connected()) {
            link.clientQp.postWriteWithImm(1, link.clientMr, 0, 8, link.serverMr.address(),
                link.serverMr.rkey() + 1, 0, 0);
            link.expectOne(link.clientSendCq, REM_ACCESS_ERR, OP_RDMA_WRITE);
            assertConnectionEnded(link);
        }
    }

    @Test
    void writeOutsideThePeersRegionIsARemoteAccessError() throws IOException {
        try (Link link = Link.connected()) {
            link.clientQp.postWriteWithImm(1, link.clientMr, 0, 8, link.serverMr.address() + Link.REGION - 7,
                link.serverMr.rkey(), 0, SIGNALED);
            link.expectOne(link.clientSendCq, REM_ACCESS_ERR, OP_RDMA_WRITE);
            assertConnectionEnded(link);
            assertEquals(4, link.poll(link.serverRecvCq));
            for (int i = 0; i < 4; i++) {
                assertEquals(WR_FLUSH_ERR, link.out.status[i], "no receive was consumed");
            }
        }
    }

    @Test
    void writeIntoARegionWithoutRemoteWriteAccessIsARemoteAccessError() throws IOException {
        try (Link link = Link.connected(new Link.Options().access(MemoryRegion.LOCAL_WRITE).serverReceives(1, 64))) {
            link.clientQp.postWriteWithImm(1, link.clientMr, 0, 8, link.serverMr.address(), link.serverMr.rkey(), 0,
                SIGNALED);
            link.expectOne(link.clientSendCq, REM_ACCESS_ERR, OP_RDMA_WRITE);
            assertConnectionEnded(link);
        }
    }

    @Test
    void writeWithImmediateWithoutPostedReceiveIsReceiverNotReady() throws IOException {
        try (Link link = Link.connected(new Link.Options().serverReceives(0, 64))) {
            link.clientQp.postWriteWithImm(1, link.clientMr, 0, 8, link.serverMr.address(), link.serverMr.rkey(), 0,
                SIGNALED);
            link.expectOne(link.clientSendCq, io.rdmanio.core.fabric.Completions.RNR_RETRY_EXC_ERR, OP_RDMA_WRITE);
            assertEquals(1, link.clientFabric.receiverNotReadyCount());
            assertConnectionEnded(link);
        }
    }

    @Test
    void sendQueueFullThrowsAndOnlyPolledCompletionsFreeSlots() throws IOException {
        try (Link link = Link.connected(new Link.Options().sendWr(4).serverReceives(16, 64))) {
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
        try (Link link = Link.connected(new Link.Options().sendWr(4).serverReceives(16, 64))) {
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
        try (Link link = Link.connected(new Link.Options().recvWr(3).serverReceives(3, 64))) {
            FabricException e = assertThrows(FabricException.class,
                () -> link.serverQp.postRecv(9, link.serverMr, 0, 64));
            assertTrue(e.getMessage().startsWith("receive queue full"), e.getMessage());
            link.clientQp.postSend(1, link.clientMr, 0, 8, 0);
            assertEquals(1, link.poll(link.serverRecvCq));
            link.serverQp.postRecv(9, link.serverMr, 0, 64);
        }
    }

    @Test
    void receivesMustLieInAValidRegionWithLocalWrite() throws IOException {
        try (Link link = Link.connected(new Link.Options().serverReceives(0, 64))) {
            assertThrows(FabricException.class, () -> link.serverQp.postRecv(1, link.serverMr, Link.REGION - 1, 2));
            assertThrows(FabricException.class, () -> link.serverQp.postRecv(1, link.clientMr, 0, 2));
            MemoryRegion readOnly = link.serverFabric.register(ByteBuffer.allocateDirect(64), MemoryRegion.REMOTE_READ);
            FabricException e = assertThrows(FabricException.class, () -> link.serverQp.postRecv(1, readOnly, 0, 2));
            assertTrue(e.getMessage().contains("LOCAL_WRITE"), e.getMessage());
        }
    }

    @Test
    void completionQueueOverrunFailsEveryQueuePairOnIt() throws IOException {
        try (Link link = Link.connected(new Link.Options().cqEntries(3).recvWr(8).serverReceives(8, 64))) {
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
    void regionsAreInvalidAfterDeregistration() throws IOException {
        try (Link link = Link.connected()) {
            MemoryRegion extra = link.clientFabric.register(ByteBuffer.allocateDirect(64), MemoryRegion.LOCAL_WRITE);
            extra.close();
            assertThrows(FabricException.class, () -> link.clientQp.postRecv(1, extra, 0, 8));
            link.clientQp.postSend(2, extra, 0, 8, 0);
            link.expectOne(link.clientSendCq, LOC_PROT_ERR, OP_SEND);
            assertConnectionEnded(link);
        }
        try (Link link = Link.connected()) {
            // Deregistered between post and execution: still caught.
            MemoryRegion extra = link.clientFabric.register(ByteBuffer.allocateDirect(64), MemoryRegion.LOCAL_WRITE);
            link.clientQp.postSend(2, extra, 0, 8, SIGNALED);
            extra.close();
            link.expectOne(link.clientSendCq, LOC_PROT_ERR, OP_SEND);
            assertConnectionEnded(link);
        }
        try (Link link = Link.connected()) {
            // A deregistered region is no longer a target of RDMA writes.
            long address = link.serverMr.address();
            int rkey = link.serverMr.rkey();
            link.serverMr.close();
            link.clientQp.postWriteWithImm(1, link.clientMr, 0, 8, address, rkey, 0, SIGNALED);
            link.expectOne(link.clientSendCq, REM_ACCESS_ERR, OP_RDMA_WRITE);
            assertConnectionEnded(link);
        }
    }

    @Test
    void heapBuffersAndRemoteWriteWithoutLocalWriteAreRefused() throws IOException {
        LoopbackFabric fabric = Link.open();
        try {
            IllegalArgumentException heap = assertThrows(IllegalArgumentException.class,
                () -> fabric.register(ByteBuffer.allocate(64), MemoryRegion.LOCAL_WRITE));
            assertTrue(heap.getMessage().contains("direct buffers"), heap.getMessage());
            IllegalArgumentException access = assertThrows(IllegalArgumentException.class,
                () -> fabric.register(ByteBuffer.allocateDirect(64), MemoryRegion.REMOTE_WRITE));
            assertTrue(access.getMessage().contains("LOCAL_WRITE"), access.getMessage());
        } finally {
            fabric.close();
        }
    }

    @Test
    void postingBeforeTheConnectionIsEstablishedThrows() throws IOException {
        try (Link link = Link.requested(new Link.Options(), null)) {
            FabricException e = assertThrows(FabricException.class,
                () -> link.clientQp.postSend(1, link.clientMr, 0, 8, SIGNALED));
            assertTrue(e.getMessage().contains("not connected"), e.getMessage());
            link.clientQp.postRecv(1, link.clientMr, 0, 8);
        }
    }
}
