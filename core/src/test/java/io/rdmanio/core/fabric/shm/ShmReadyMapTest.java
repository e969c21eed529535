package io.rdmanio.core.fabric.shm;

import static io.rdmanio.core.fabric.shm.ShmTestSupport.pollExactly;
import static io.rdmanio.core.fabric.shm.ShmTestSupport.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.QueuePair;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** A completion queue's ready map: stray bits cost nothing but a look, and no completion is lost to them. */
class ShmReadyMapTest extends WithShmDirectory {

    @Test
    void everyBitOfTheMapSetByAPeerYieldsOnlyTheRealCompletions() throws Exception {
        try (ShmPair pair = ShmPair.connected(dir, 8, 8, 64)) {
            ShmCompletionQueue cq = (ShmCompletionQueue) pair.serverRecvCq;
            // A peer may write anything into the map it is granted: every word and summary bit, even those past
            // the queue pairs the map holds.
            ByteBuffer map = cq.map;
            for (int at = ShmReadyMapDescriptor.SUMMARY_OFFSET; at + 8 <= map.capacity(); at += 8) {
                map.putLong(at, -1L);
            }
            Completions out = new Completions(8);
            assertEquals(0, cq.poll(out));
            pair.clientQp.postSend(7, pair.clientMr, 0, 64, QueuePair.SIGNALED);
            pollExactly(pair.serverRecvCq, out, 1);
            assertEquals(Completions.SUCCESS, out.status[0]);
            assertEquals(64, out.byteLen[0]);
            assertEquals(0, cq.poll(out));
        }
    }

    @Test
    void aCompletionHintedButNeverMarkedArrivesThroughThePeriodicCheck() throws Exception {
        try (ShmPair pair = ShmPair.connected(dir, 8, 8, 64)) {
            // A peer that sets the server's hinted flag without marking its ready map: no producer marks it any
            // more, so only the server's periodic ring check can bring the completion to a poll.
            ByteBuffer ring = ((ShmQueuePair) pair.clientQp).rings();
            int serverCq = serverCompletions(ring);
            ShmRingsDescriptor.INT.setVolatile(ring, serverCq + ShmRingsDescriptor.CQ_HINTED_OFFSET, 1);
            pair.clientQp.postSend(7, pair.clientMr, 0, 64, QueuePair.SIGNALED);
            Completions out = new Completions(8);
            pollExactly(pair.serverRecvCq, out, 1);
            assertEquals(Completions.SUCCESS, out.status[0]);
            assertEquals(64, out.byteLen[0]);
        }
    }

    @Test
    void aReadyMapIndexOutsideTheMapFailsTheConnectionAsAProtocolError() throws Exception {
        try (ShmPair pair = ShmPair.connected(dir, 8, 8, 64)) {
            ByteBuffer ring = ((ShmQueuePair) pair.clientQp).rings();
            int serverCq = serverCompletions(ring);
            int capacity = ((ShmCompletionQueue) pair.serverRecvCq).capacity;
            ring.putInt(serverCq + ShmRingsDescriptor.CQ_READY_INDEX_OFFSET, capacity);
            // The client's first send maps the map this names, or a periodic check of either side finds it first:
            // either way the connection fails, naming the ready map, and nothing is marked out of range.
            pair.clientQp.postSend(7, pair.clientMr, 0, 64, QueuePair.SIGNALED);
            Completions out = new Completions(8);
            pollExactly(pair.clientSendCq, out, 1);
            assertNotEquals(Completions.SUCCESS, out.status[0]);
            CmEvent d = expect(pair.clientEvents, CmEvent.Type.DISCONNECTED);
            assertTrue(d.reason() != null && d.reason().startsWith(CmEvent.PROTOCOL_ERROR)
                && d.reason().contains("ready map") && d.reason().contains(String.valueOf(capacity)),
                () -> "reason " + d.reason());
        }
    }

    /** The offset of the server's (side 0's) completion queue in the ring file. */
    private static int serverCompletions(ByteBuffer ring) {
        int cap0 = ring.getInt(ShmRingsDescriptor.CAPACITY_OFFSET);
        int cap1 = ring.getInt(ShmRingsDescriptor.CAPACITY_OFFSET + 4);
        return ShmRingsDescriptor.completionQueueOffset(0, cap0, cap1);
    }
}
