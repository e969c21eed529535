package io.rdmanio.core.fabric.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * A send posted by a thread that carries its interrupt status (engine progress run by an interrupted reader) maps
 * the peer's region on first use like any other: it arrives, and the thread keeps its interrupt status.
 */
class ShmInterruptedPosterTest extends WithShmDirectory {

    @Test
    void aSendFromAnInterruptedThreadMapsThePeersRegionAndArrives() throws IOException {
        try (ShmPair pair = ShmPair.connected(dir, 8, 4, 256)) {
            Completions out = new Completions(8);
            Thread.currentThread().interrupt();
            try {
                pair.clientQp.postSend(1, pair.clientMr, 0, 100, QueuePair.SIGNALED);
                assertTrue(Thread.currentThread().isInterrupted(), "the interrupt status is kept");
            } finally {
                Thread.interrupted();
            }
            ShmTestSupport.pollExactly(pair.clientSendCq, out, 1);
            assertEquals(Completions.SUCCESS, out.status[0], Completions.statusName(out.status[0]));
            ShmTestSupport.pollExactly(pair.serverRecvCq, out, 1);
            assertEquals(Completions.SUCCESS, out.status[0], Completions.statusName(out.status[0]));
            assertEquals(100, out.byteLen[0]);
            assertFalse(pair.clientQp.isError());
        }
    }
}
