package io.rdmanio.core.fabric.loopback;

import static io.rdmanio.core.fabric.QueuePair.SIGNALED;
import static io.rdmanio.core.fabric.loopback.Link.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** One fabric, one event channel and one completion queue for every queue pair, as an engine sets it up. */
class LoopbackSharedQueueTest {

    private final LoopbackFabric fabric;
    private final EventChannel events;
    private final CmId listener;
    private final MemoryRegion region;

    LoopbackSharedQueueTest() throws IOException {
        fabric = Link.open();
        events = fabric.createEventChannel();
        listener = fabric.createId(events);
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        listener.listen(16);
        region = fabric.register(ByteBuffer.allocateDirect(1 << 16), MemoryRegion.LOCAL_WRITE);
    }

    /** Connects a client to the listener; both queue pairs on {@code cq}, each with {@code receives} posted. */
    private QueuePair[] connect(CompletionQueue cq, int receives) throws IOException {
        CmId client = fabric.createId(events);
        QueuePair clientQp = client.createQueuePair(new QueuePair.Config(cq, cq, 8, 8, 0));
        for (int i = 0; i < receives; i++) {
            clientQp.postRecv(100 + i, region, 0, 64);
        }
        client.connect(listener.localAddress(), null);
        CmId server = expect(events, CmEvent.Type.CONNECT_REQUEST).id();
        QueuePair serverQp = server.createQueuePair(new QueuePair.Config(cq, cq, 8, 8, 0));
        for (int i = 0; i < receives; i++) {
            serverQp.postRecv(200 + i, region, 64, 64);
        }
        server.accept(null);
        expect(events, CmEvent.Type.ESTABLISHED);
        expect(events, CmEvent.Type.ESTABLISHED);
        return new QueuePair[] {clientQp, serverQp};
    }

    @Test
    void bothDirectionsThroughOneQueue() throws IOException {
        try (fabric) {
            CompletionQueue cq = fabric.createCompletionQueue(64);
            QueuePair[] qps = connect(cq, 2);
            qps[0].postSend(1, region, 128, 16, SIGNALED);
            qps[1].postSend(2, region, 128, 16, SIGNALED);
            Completions out = new Completions(16);
            int total = 0;
            int recvs = 0;
            for (int polls = 0; polls < 10 && total < 4; polls++) {
                int n = cq.poll(out);
                for (int k = 0; k < n; k++) {
                    assertEquals(Completions.SUCCESS, out.status[k]);
                    if (out.opcode[k] == Completions.OP_RECV) {
                        recvs++;
                    }
                }
                total += n;
            }
            assertEquals(4, total);
            assertEquals(2, recvs);
        }
    }

    @Test
    void overrunFailsEveryQueuePairOnTheQueue() throws IOException {
        try (fabric) {
            CompletionQueue cq = fabric.createCompletionQueue(4);
            QueuePair[] first = connect(cq, 0);
            QueuePair[] second = connect(cq, 0);
            for (int i = 0; i < 5; i++) {
                first[1].postRecv(i, region, 0, 64);
            }
            for (int i = 0; i < 5; i++) {
                first[0].postSend(i, region, 0, 8, 0);
            }
            Completions out = new Completions(16);
            FabricException e = assertThrows(FabricException.class, () -> cq.poll(out));
            assertTrue(e.getMessage().contains("overrun"), e.getMessage());
            for (QueuePair qp : new QueuePair[] {first[0], first[1], second[0], second[1]}) {
                assertTrue(qp.isError(), qp + " in error");
            }
            for (int i = 0; i < 4; i++) {
                assertEquals(CmEvent.Type.DISCONNECTED, events.poll().type());
            }
        }
    }
}
