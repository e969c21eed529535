package io.rdmanio.core.buffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.Fabrics;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The pool grows by chunks and gives whole free chunks back, after their grace, beyond
 * {@link SlotPool#RETAINED_CHUNKS} (one chunk's worth kept for the next burst).
 */
class SlotPoolTest {

    @Test
    void aBurstGivesItsChunksBackAndTheirNumbersAreReused() throws Exception {
        try (Fabric fabric = Fabrics.open("loopback", Map.of())) {
            SlotPool pool = new SlotPool(fabric, 1024, 16 * 1024);
            int perChunk = pool.slotsPerChunk();
            long chunkBytes = (long) perChunk * 1024;
            // Ten connections' worth, each a chunk and a half.
            int each = perChunk + perChunk / 2;
            int[][] held = new int[10][each];
            for (int[] ids : held) {
                pool.allocate(ids, each);
            }
            assertEquals(15 * chunkBytes, pool.registeredBytes());
            for (int[] ids : held) {
                pool.free(ids, each);
            }
            assertEquals(0, pool.slotsInUse());
            long now = System.nanoTime();
            assertEquals(now + 1_000_000_000L, pool.releaseIdleChunks(now, 1_000_000_000L), 1_000_000_000L,
                "the grace not yet over: nothing released, the next release due within it");
            assertEquals(15 * chunkBytes, pool.registeredBytes());
            assertEquals(Long.MAX_VALUE, pool.releaseIdleChunks(System.nanoTime(), 0));
            assertEquals(SlotPool.RETAINED_CHUNKS * chunkBytes, pool.registeredBytes(), "what stays registered");
            // Reused: new slots come from the retained chunks first, then from released chunk numbers, and every
            // id names memory that is registered.
            int[] again = new int[4 * perChunk];
            pool.allocate(again, again.length);
            assertEquals(4 * chunkBytes, pool.registeredBytes());
            Set<Integer> chunks = new HashSet<>();
            for (int id : again) {
                chunks.add(id / perChunk);
                assertTrue(pool.region(id).buffer().capacity() >= pool.offset(id) + 1024);
            }
            assertEquals(4, chunks.size());
            assertTrue(chunks.stream().allMatch(c -> c < 15), "chunk numbers reused: " + chunks);
            pool.free(again, again.length);
            pool.releaseIdleChunks(System.nanoTime(), 0);
            assertEquals(SlotPool.RETAINED_CHUNKS * chunkBytes, pool.registeredBytes());
            pool.close();
        }
    }

    @Test
    void chunksFreedByABurstAreDeregisteredButOneChunksWorthIsKept() throws Exception {
        try (Fabric fabric = Fabrics.open("loopback", Map.of()); SlotPool pool = new SlotPool(fabric, 4096, 16 * 4096)) {
            int perChunk = pool.slotsPerChunk();
            long chunkBytes = (long) perChunk * pool.slotSize();
            int[] ids = new int[perChunk * 5];
            pool.allocate(ids, ids.length);
            assertEquals(5 * chunkBytes, pool.registeredBytes());
            pool.free(ids, ids.length);
            assertEquals(5 * chunkBytes, pool.registeredBytes(), "nothing released before the grace is over");
            pool.releaseIdleChunks(System.nanoTime(), 0);
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
            pool.releaseIdleChunks(System.nanoTime(), 0);
            assertEquals(chunkBytes, pool.registeredBytes());
            int gone = -1;
            int kept = -1;
            for (int id : ids) {
                if (pool.region(id) == null) {
                    gone = id;
                } else {
                    kept = id;
                }
            }
            assertTrue(gone >= 0 && kept >= 0, "four chunks released, one kept");
            int released = gone;
            int retained = kept;
            assertThrows(IllegalArgumentException.class, () -> pool.free(released),
                "a slot of a released chunk is no slot of the pool");
            assertThrows(IllegalStateException.class, () -> pool.free(retained), "a slot freed twice");
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
                pool.releaseIdleChunks(System.nanoTime(), 0);
                assertEquals(registered, pool.registeredBytes());
            }
        }
    }
}
