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
 * A slot is named by an int id: {@code chunk * slotsPerChunk + index}. A chunk whose every slot has been free for a
 * grace period is deregistered by {@link #releaseIdleChunks} while at least {@link #RETAINED_CHUNKS} chunks' worth
 * of free slots stay registered without it, so that a burst of connections (or of closed connections lingering)
 * does not hold its peak of memory (and, on shm, of descriptors and shared files) when it is over, while a
 * connection opened and closed over and over does not register memory each time. The highest-numbered chunks go
 * first and a released chunk's number is reused by the next chunk registered, so live chunks stay at low numbers.
 * The grace keeps a just-freed slot's memory registered for a peer that took the slot's receive an instant before
 * the connection ended (an shm sender copies without a lock the receiver holds), so such a late copy lands in
 * memory that is still mapped, never in a deregistered region.
 *
 * <p>Thread-safe: allocation and freeing are synchronized (connection setup and teardown only); the lookups
 * {@link #region}, {@link #buffer} and {@link #offset} are lock-free and may be used on the data path.
 */
public final class SlotPool implements AutoCloseable {

    /** Chunks' worth of free slots kept registered when a whole chunk is free again. */
    public static final int RETAINED_CHUNKS = 1;

    private final Fabric fabric;
    private final int slotSize;
    private final int slotsPerChunk;
    private final int chunkShift;

    // ---- written under this; the arrays are replaced (never mutated in place past their published length); a
    // released chunk's entries are null until its number is reused
    private volatile MemoryRegion[] regions = new MemoryRegion[0];
    private volatile ByteBuffer[] buffers = new ByteBuffer[0];
    private int[] free = new int[0];
    private int freeCount;
    private int inUse;
    /** Slots of each chunk handed out and not yet freed (indexed like {@link #regions}); 0 for a released chunk. */
    private int[] chunkInUse = new int[0];
    /** When each chunk last became wholly free ({@link System#nanoTime()}); meaningless while it is in use. */
    private long[] chunkFreeSince = new long[0];
    private int chunks;
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
            chunkInUse[id >>> chunkShift]++;
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
        if (chunkInUse[chunk] == 0) {
            throw new IllegalStateException("slot " + id + " freed twice: none of its chunk's slots is in use");
        }
        if (freeCount == free.length) {
            free = Arrays.copyOf(free, Math.max(16, free.length * 2));
        }
        free[freeCount++] = id;
        inUse--;
        if (--chunkInUse[chunk] == 0) {
            chunkFreeSince[chunk] = System.nanoTime();
        }
    }

    /**
     * Deregisters the chunks, highest-numbered first, that have been wholly free for {@code graceNanos}, as long as
     * at least {@link #RETAINED_CHUNKS} chunks' worth of free slots stay registered without them.
     *
     * @return when the next wholly free chunk beyond the retained ones passes its grace ({@link System#nanoTime()}
     *         scale), or {@link Long#MAX_VALUE} when there is none
     */
    public synchronized long releaseIdleChunks(long now, long graceNanos) {
        long next = Long.MAX_VALUE;
        if (closed || freeCount - slotsPerChunk < RETAINED_CHUNKS * slotsPerChunk) {
            return next;
        }
        for (int c = regions.length - 1; c >= 0; c--) {
            if (regions[c] == null || chunkInUse[c] != 0) {
                continue;
            }
            if (freeCount - slotsPerChunk < RETAINED_CHUNKS * slotsPerChunk) {
                break;
            }
            long due = chunkFreeSince[c] + graceNanos;
            if (due - now <= 0) {
                releaseChunk(c);
            } else if (due - next < 0) {
                next = due;
            }
        }
        return next;
    }

    /** Deregisters a chunk none of whose slots is in use; nothing can name its memory any more. */
    private void releaseChunk(int chunk) {
        int kept = 0;
        for (int i = 0; i < freeCount; i++) {
            if ((free[i] >>> chunkShift) != chunk) {
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
        chunks--;
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
        if (chunkInUse.length < length) {
            chunkInUse = Arrays.copyOf(chunkInUse, length);
            chunkFreeSince = Arrays.copyOf(chunkFreeSince, length);
        }
        chunkInUse[chunk] = 0;
        chunkFreeSince[chunk] = System.nanoTime();
        chunks++;
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
        return (long) chunks * slotsPerChunk * slotSize;
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
