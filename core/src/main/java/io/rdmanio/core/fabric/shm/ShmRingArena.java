package io.rdmanio.core.fabric.shm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Ring cells of one length in one shared file, for the connections this fabric accepts from one peer process: a
 * connection's rings ({@link ShmRingsDescriptor}) are a cell, so accepting a connection creates no file and the
 * connecting side maps no file once it has mapped the arena. Creating, sealing and mapping a file per connection
 * (a file-thread round trip on each side) was most of an shm connect's time.
 *
 * <p>An arena is shared with one peer process only (its {@link ShmPeer} owns it): a peer that garbles the cells
 * it can reach breaks only its own connections with this process, as it could through each connection's file.
 * The file stays open while the arena lives (the peer maps it at its first connection into it, and a later one
 * needs no mapping); it is closed when the peer is released, that is when no connection with it is left.
 *
 * <p>A cell given back rests for {@link #REST_NANOS} before it is handed out again, oldest first, and is zeroed
 * then: the queue pair is destroyed once this side is done with the connection, but the peer may still be in the
 * middle of a write into the cell (its poller clearing a flag, a receive it was posting) until it has processed
 * the disconnect, and such a write must not land in the next connection's rings. When no cell has rested long
 * enough, a new arena is made. Thread-safety: guarded by the owning {@link ShmPeer}'s arena lock.
 */
final class ShmRingArena {

    /** About this many bytes per arena (sparse: a cell's pages exist only once written), one cell at least. */
    static final int TARGET_BYTES = 1 << 20;
    /** How long a given-back cell rests before another connection takes it. */
    static final long REST_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);

    /** One connection's rings in an arena. */
    static final class Cell {
        final ShmRingArena arena;
        final int index;
        final ByteBuffer rings;

        private Cell(ShmRingArena arena, int index, ByteBuffer rings) {
            this.arena = arena;
            this.index = index;
            this.rings = rings;
        }

        /** The cell's offset in the arena's file. */
        int offset() {
            return index * arena.cellLength;
        }
    }

    final ShmFile file;
    final int cellLength;
    final int cells;
    private final ArrayDeque<Integer> free = new ArrayDeque<>();
    /** Cells handed out before: zeroed when handed out again (a fresh file's pages read zero unwritten). */
    private final boolean[] used;
    /** When each cell was given back (System.nanoTime). */
    private final long[] freedAt;
    private int inUse;

    private ShmRingArena(ShmFile file, int cellLength, int cells) {
        this.file = file;
        this.cellLength = cellLength;
        this.cells = cells;
        this.used = new boolean[cells];
        this.freedAt = new long[cells];
        for (int i = 0; i < cells; i++) {
            free.add(i);
        }
    }

    /** A new arena of cells of {@code cellLength} bytes (a multiple of a page). */
    static ShmRingArena create(ShmFabric fabric, int cellLength) throws IOException {
        int cells = Math.max(1, TARGET_BYTES / cellLength);
        return new ShmRingArena(ShmFile.create(fabric.newFilePath('a'), cells * cellLength, fabric.group),
            cellLength, cells);
    }

    /** A free cell that has rested, zeroed; {@code null} when there is none. */
    Cell take(long now) {
        Integer head = free.peek();
        if (head == null || (used[head] && now - freedAt[head] < REST_NANOS)) {
            return null;
        }
        int i = free.poll();
        inUse++;
        ByteBuffer rings = file.buffer.slice(i * cellLength, cellLength);
        if (used[i]) {
            for (int at = 0; at < cellLength; at += 8) {
                rings.putLong(at, 0);
            }
        }
        used[i] = true;
        return new Cell(this, i, rings);
    }

    void release(Cell cell, long now) {
        inUse--;
        freedAt[cell.index] = now;
        free.add(cell.index);
    }

    int inUse() {
        return inUse;
    }
}
