package io.rdmanio.core.buffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.Fabrics;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The pool returns the memory of a burst once its slots are free, and keeps a chunk's worth for the next one. */
class SlotPoolTest {

    @Test
    void chunksFreedByABurstAreDeregisteredButOneChunksWorthIsKept() throws Exception {
        try (Fabric fabric = Fabrics.open("loopback", Map.of()); SlotPool pool = new SlotPool(fabric, 4096, 16 * 4096)) {
            int perChunk = pool.slotsPerChunk();
            long chunkBytes = (long) perChunk * pool.slotSize();
            int[] ids = new int[perChunk * 5];
            pool.allocate(ids, ids.length);
            assertEquals(5 * chunkBytes, pool.registeredBytes());
            pool.free(ids, ids.length);
            assertEquals(chunkBytes, pool.registeredBytes(), "one chunk's worth of free slots is kept");
            assertEquals(perChunk, pool.freeSlots());
            assertEquals(0, pool.slotsInUse());

            // Released chunk indexes are reused, and every slot handed out names live memory.
            pool.allocate(ids, ids.length);
            assertEquals(5 * chunkBytes, pool.registeredBytes());
            Set<Integer> distinct = new HashSet<>();
            for (int id : ids) {
                distinct.add(id);
                assertNotNull(pool.region(id));
                pool.buffer(id).putInt(pool.offset(id), id);
            }
            assertEquals(ids.length, distinct.size(), "no slot is handed out twice");
            for (int id : ids) {
                assertEquals(id, pool.buffer(id).getInt(pool.offset(id)));
            }
            pool.free(ids, ids.length);
            assertEquals(chunkBytes, pool.registeredBytes());
            assertThrows(IllegalArgumentException.class, () -> pool.free(ids[ids.length - 1]),
                "a slot of a released chunk is no slot of the pool");
        }
    }

    @Test
    void aConnectCloseLoopDoesNotRegisterAChunkEachTime() throws Exception {
        try (Fabric fabric = Fabrics.open("loopback", Map.of()); SlotPool pool = new SlotPool(fabric, 4096, 16 * 4096)) {
            int[] ids = new int[pool.slotsPerChunk() / 2 + 1];
            pool.allocate(ids, ids.length);
            pool.free(ids, ids.length);
            long registered = pool.registeredBytes();
            for (int i = 0; i < 100; i++) {
                pool.allocate(ids, ids.length);
                pool.free(ids, ids.length);
                assertEquals(registered, pool.registeredBytes());
            }
        }
    }
}
