package io.rdmanio.core.buffer;

import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.protocol.FrameDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Registered memory carved into equal slots: receive rings and send staging of every connection of an engine.
 *
 * <p>Memory is registered in chunks of {@link #slotsPerChunk()} slots, once, when the free list runs dry (never on
 * the data path: connections allocate their slots when they are set up and free them when they are torn down).
 * A slot is named by an int id: {@code chunk * slotsPerChunk + index}. A chunk whose slots are all free again is
 * deregistered when the pool keeps at least another chunk's worth of free slots, so a burst of connections does
 * not hold its peak of memory (and, on shm, of descriptors and shared files) after its connections are gone,
 * while a connect/close loop does not register and deregister a chunk each time. A released chunk's index is
 * reused by the next chunk registered.
 *
 * <p>Thread-safe: allocation and freeing are synchronized (connection setup and teardown only); the lookups
 * {@link #region}, {@link #buffer} and {@link #offset} are lock-free and may be used on the data path.
 */
public final class SlotPool implements AutoCloseable {

    private final Fabric fabric;
    private final int slotSize;
    private final int slotsPerChunk;
    private final int chunkShift;

    // ---- written under this; the arrays are replaced (never mutated in place past their published length)
    private volatile MemoryRegion[] regions = new MemoryRegion[0];
    private volatile ByteBuffer[] buffers = new ByteBuffer[0];
    private int[] free = new int[0];
    private int freeCount;
    /** Slots in use per chunk (indexed like {@link #regions}); a released chunk's entry is 0. */
    private int[] chunkUse = new int[0];
    private int inUse;
    private boolean closed;

    /**
     * @param slotSize    bytes per slot (a valid frame slot size: power of two, at least 256)
     * @param chunkBytes  bytes registered at a time; rounded to a power-of-two number of slots, at least 16
     */
    public SlotPool(Fabric fabric, int slotSize, int chunkBytes) {
        this.fabric = fabric;
        this.slotSize = FrameDescriptor.ensureSlotSize(slotSize);
        int slots = Math.max(16, Integer.highestOneBit(Math.max(1, chunkBytes / slotSize)));
        // A chunk is one direct buffer, so it must stay below 2 GiB.
        while ((long) slots * slotSize > (1L << 30)) {
            slots >>= 1;
        }
        this.slotsPerChunk = slots;
        this.chunkShift = Integer.numberOfTrailingZeros(slots);
    }

    public int slotSize() {
        return slotSize;
    }

    public int slotsPerChunk() {
        return slotsPerChunk;
    }

    /**
     * Fills {@code out[0..n)} with free slot ids, registering chunks as needed.
     *
     * @throws IOException if registration fails or the pool is closed; nothing is allocated then
     */
    public synchronized void allocate(int[] out, int n) throws IOException {
        if (closed) {
            throw new IOException("buffer pool closed");
        }
        while (freeCount < n) {
            addChunk();
        }
        for (int i = 0; i < n; i++) {
            int id = free[--freeCount];
            out[i] = id;
            chunkUse[id >>> chunkShift]++;
        }
        inUse += n;
    }

    /** Returns {@code n} slots; their memory may be handed out again at once. */
    public synchronized void free(int[] ids, int n) {
        for (int i = 0; i < n; i++) {
            free(ids[i]);
        }
    }

    public synchronized void free(int id) {
        int chunk = id >>> chunkShift;
        if (id < 0 || chunk >= regions.length || regions[chunk] == null) {
            throw new IllegalArgumentException("not a slot of this pool: " + id);
        }
        if (chunkUse[chunk] == 0) {
            throw new IllegalStateException("slot " + id + " freed twice: none of its chunk's slots is in use");
        }
        if (freeCount == free.length) {
            free = Arrays.copyOf(free, Math.max(16, free.length * 2));
        }
        free[freeCount++] = id;
        inUse--;
        if (--chunkUse[chunk] == 0 && freeCount - slotsPerChunk >= slotsPerChunk && !closed) {
            releaseChunk(chunk);
        }
    }

    /** Deregisters {@code chunk}, all of whose slots are free, and drops its ids from the free list. */
    private void releaseChunk(int chunk) {
        int kept = 0;
        for (int i = 0; i < freeCount; i++) {
            if (free[i] >>> chunkShift != chunk) {
                free[kept++] = free[i];
            }
        }
        freeCount = kept;
        MemoryRegion region = regions[chunk];
        MemoryRegion[] r = regions.clone();
        ByteBuffer[] b = buffers.clone();
        r[chunk] = null;
        b[chunk] = null;
        buffers = b;
        regions = r;
        region.close();
    }

    private void addChunk() throws IOException {
        int chunk = 0;
        while (chunk < regions.length && regions[chunk] != null) {
            chunk++;
        }
        // The fabric chooses the memory: a shared-memory peer can only reach memory the fabric mapped.
        MemoryRegion region = fabric.allocate(slotsPerChunk * slotSize, MemoryRegion.LOCAL_WRITE);
        ByteBuffer view = region.buffer().order(FrameDescriptor.BYTE_ORDER);
        int length = Math.max(regions.length, chunk + 1);
        MemoryRegion[] r = Arrays.copyOf(regions, length);
        ByteBuffer[] b = Arrays.copyOf(buffers, length);
        r[chunk] = region;
        b[chunk] = view;
        buffers = b;
        regions = r;
        if (chunkUse.length < length) {
            chunkUse = Arrays.copyOf(chunkUse, length);
        }
        if (free.length < freeCount + slotsPerChunk) {
            free = Arrays.copyOf(free, freeCount + slotsPerChunk);
        }
        // Pushed in reverse so that allocation hands out ascending ids.
        for (int i = slotsPerChunk - 1; i >= 0; i--) {
            free[freeCount++] = (chunk << chunkShift) | i;
        }
    }

    /** The registered region holding slot {@code id}. */
    public MemoryRegion region(int id) {
        return regions[id >>> chunkShift];
    }

    /**
     * The chunk buffer holding slot {@code id} (little-endian, shared: use absolute access at {@link #offset}
     * only).
     */
    public ByteBuffer buffer(int id) {
        return buffers[id >>> chunkShift];
    }

    /** The byte offset of slot {@code id} in its region and buffer. */
    public int offset(int id) {
        return (id & (slotsPerChunk - 1)) * slotSize;
    }

    /** Slots handed out and not yet freed. */
    public synchronized int slotsInUse() {
        return inUse;
    }

    public synchronized int freeSlots() {
        return freeCount;
    }

    /** Bytes registered with the fabric. */
    public synchronized long registeredBytes() {
        long chunks = 0;
        for (MemoryRegion r : regions) {
            if (r != null) {
                chunks++;
            }
        }
        return chunks * slotsPerChunk * slotSize;
    }

    /** Deregisters every chunk. Slots still in use must no longer be named by posted work. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (MemoryRegion r : regions) {
            if (r != null) {
                r.close();
            }
        }
    }
}
