package io.rdmanio.core.fabric.shm;

import static io.rdmanio.core.fabric.shm.ShmTestSupport.pollExactly;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.QueuePair;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A completion queue's ready map: stray bits cost nothing but a look, and no completion is lost to them. */
class ShmReadyMapTest {

    private Path dir;

    @BeforeEach
    void open() throws Exception {
        dir = ShmTestSupport.newDirectory();
    }

    @AfterEach
    void close() throws Exception {
        ShmTestSupport.deleteDirectory(dir);
    }

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
}
