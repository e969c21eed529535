package io.rdmanio.core.fabric.loopback;

import static io.rdmanio.core.fabric.Completions.OP_RECV;
import static io.rdmanio.core.fabric.Completions.OP_SEND;
import static io.rdmanio.core.fabric.Completions.SUCCESS;
import static io.rdmanio.core.fabric.Completions.WR_FLUSH_ERR;
import static io.rdmanio.core.fabric.QueuePair.INLINE;
import static io.rdmanio.core.fabric.QueuePair.SIGNALED;
import static io.rdmanio.core.fabric.loopback.Link.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.testsupport.QueueOptions;
import java.io.IOException;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The loopback fabric's own data path: inline sends, a payload read when the request is carried out, unsignaled
 * sends flushed at a disconnect, its keys and addresses. What every fabric must do is in
 * {@link LoopbackSpiConformanceTest}.
 */
class LoopbackDataPathTest {

    @Test
    void inlineSendCopiesAtPostTime() throws IOException {
        try (Link link = Link.connected()) {
            link.fill(link.clientMr, 0, 64, 3);
            link.clientQp.postSend(1, link.clientMr, 0, 64, SIGNALED | INLINE);
            link.fill(link.clientMr, 0, 64, 99);
            link.expectOne(link.serverRecvCq, SUCCESS, OP_RECV);
            link.assertFilled(link.serverMr, 0, 64, 3);
            FabricException e = assertThrows(FabricException.class,
                () -> link.clientQp.postSend(2, link.clientMr, 0, 65, SIGNALED | INLINE));
            assertTrue(e.getMessage().contains("maxInlineData"), e.getMessage());
        }
    }

    @Test
    void inlineSendGatheredFromUnregisteredMemoryCopiesAtPostTime() throws IOException {
        try (Link link = Link.connected()) {
            java.nio.ByteBuffer head = java.nio.ByteBuffer.allocate(8);
            java.nio.ByteBuffer body = java.nio.ByteBuffer.allocateDirect(100);
            for (int i = 0; i < 8; i++) {
                head.put(i, (byte) (200 + i));
            }
            for (int i = 0; i < 100; i++) {
                body.put(i, (byte) i);
            }
            head.position(1);
            body.position(7);
            // 5 bytes of the head at 2, then 50 of the body at 10: 55 bytes, within the link's maxInlineData (64).
            link.clientQp.postSendInline(3, head, 2, 5, body, 10, 50, SIGNALED);
            body.put(10, (byte) 99);
            assertEquals(1, head.position(), "the head's position is the caller's");
            assertEquals(7, body.position(), "the body's position is the caller's");
            link.expectOne(link.serverRecvCq, SUCCESS, OP_RECV);
            assertEquals(55, link.out.byteLen[0]);
            java.nio.ByteBuffer got = link.serverMr.buffer();
            for (int i = 0; i < 5; i++) {
                assertEquals((byte) (202 + i), got.get(i));
            }
            for (int i = 0; i < 50; i++) {
                assertEquals((byte) (10 + i), got.get(5 + i), "copied at post time, before the body changed");
            }
            link.expectOne(link.clientSendCq, SUCCESS, OP_SEND);
            FabricException tooLong = assertThrows(FabricException.class,
                () -> link.clientQp.postSendInline(4, head, 0, 8, body, 0, 57, SIGNALED));
            assertTrue(tooLong.getMessage().contains("maxInlineData is 64"), tooLong.getMessage());
            FabricException outside = assertThrows(FabricException.class,
                () -> link.clientQp.postSendInline(5, head, 4, 8, body, 0, 1, SIGNALED));
            assertTrue(outside.getMessage().contains("the head [4, 4 + 8) is not inside"), outside.getMessage());
        }
    }

    @Test
    void aFabricOffersNoInlineSendsUntilAsked() throws IOException {
        LoopbackFabric f = LoopbackFabric.open(1);
        try {
            assertEquals(0, f.maxInlineData());
            f.offerInline(4096);
            assertEquals(4096, f.maxInlineData());
            assertThrows(IllegalArgumentException.class, () -> f.offerInline(65537));
        } finally {
            f.close();
        }
    }

    @Test
    void reusingASendBufferBeforeItsCompletionIsCaught() throws IOException {
        try (Link link = Link.connected()) {
            link.fill(link.clientMr, 0, 512, 1);
            link.clientQp.postSend(1, link.clientMr, 0, 512, SIGNALED);
            // A buggy engine refills the buffer before the completion: the peer sees the new bytes.
            link.fill(link.clientMr, 0, 512, 2);
            link.expectOne(link.clientSendCq, SUCCESS, OP_SEND);
            link.expectOne(link.serverRecvCq, SUCCESS, OP_RECV);
            link.assertFilled(link.serverMr, 0, 512, 2);
        }
    }

    @Test
    void disconnectFlushesEveryOutstandingRequestOfBothSides() throws IOException {
        try (Link link = Link.connected(new QueueOptions().serverReceives(3, 1024))) {
            link.clientQp.postRecv(77, link.clientMr, 0, 100);
            link.clientQp.postSend(1, link.clientMr, 0, 10, 0);
            link.clientQp.postSend(2, link.clientMr, 0, 10, SIGNALED);
            link.server.disconnect();
            expect(link.serverEvents, CmEvent.Type.DISCONNECTED);
            expect(link.clientEvents, CmEvent.Type.DISCONNECTED);
            assertEquals(2, link.poll(link.clientSendCq));
            assertEquals(1, link.out.wrId[0]);
            assertEquals(WR_FLUSH_ERR, link.out.status[0], "unsignaled requests flush too");
            assertEquals(2, link.out.wrId[1]);
            assertEquals(WR_FLUSH_ERR, link.out.status[1]);
            link.expectOne(link.clientRecvCq, WR_FLUSH_ERR, OP_RECV);
            assertEquals(77, link.out.wrId[0]);
            assertEquals(3, link.poll(link.serverRecvCq));
            for (int i = 0; i < 3; i++) {
                assertEquals(1000 + i, link.out.wrId[i]);
                assertEquals(WR_FLUSH_ERR, link.out.status[i]);
            }
        }
    }

    @Test
    void regionsHaveDistinctKeysAndDisjointAddresses() throws IOException {
        LoopbackFabric fabric = Link.open();
        try {
            Set<Integer> keys = new HashSet<>();
            long last = -1;
            for (int i = 0; i < 50; i++) {
                MemoryRegion r = fabric.register(java.nio.ByteBuffer.allocateDirect(100 + i * 1000),
                    MemoryRegion.LOCAL_WRITE);
                assertTrue(keys.add(r.lkey()));
                assertTrue(keys.add(r.rkey()));
                assertTrue(r.address() > last);
                last = r.address() + r.length();
                assertEquals(100 + i * 1000, r.length());
            }
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> fabric.register(java.nio.ByteBuffer.allocate(10), MemoryRegion.LOCAL_WRITE));
            assertTrue(e.getMessage().contains("direct"), e.getMessage());
            assertNotEquals(0, keys.size());
        } finally {
            fabric.close();
        }
    }
}
