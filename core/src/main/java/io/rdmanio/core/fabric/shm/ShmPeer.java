package io.rdmanio.core.fabric.shm;

import static io.rdmanio.core.fabric.shm.ShmRegionDirectoryDescriptor.ACCESS;
import static io.rdmanio.core.fabric.shm.ShmRegionDirectoryDescriptor.FD;
import static io.rdmanio.core.fabric.shm.ShmRegionDirectoryDescriptor.INODE;
import static io.rdmanio.core.fabric.shm.ShmRegionDirectoryDescriptor.LENGTH;
import static io.rdmanio.core.fabric.shm.ShmRegionDirectoryDescriptor.RKEY;

import io.rdmanio.core.fabric.MemoryRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A peer fabric (another process, or another fabric of this one) as seen from here: its region directory and the
 * regions of it mapped so far. Shared by every queue pair connected to that peer fabric, so each of its regions
 * is mapped once.
 *
 * <p>Thread-safe: lookups are lock-free (an acquire load of the directory entry and of the cached mapping);
 * mapping a region for the first time locks this object. Reference-counted by the owning fabric.
 */
final class ShmPeer {

    /** A mapping of one peer region, valid while the directory entry still holds {@link #state}. */
    private static final class Mapped {
        final long state;
        final ByteBuffer memory;
        final int fd;
        final long inode;

        Mapped(long state, ByteBuffer memory, int fd, long inode) {
            this.state = state;
            this.memory = memory;
            this.fd = fd;
            this.inode = inode;
        }
    }

    final long pid;
    final long nonce;
    private final ByteBuffer directory;
    private final int directoryFd;
    private final long directoryInode;
    private final int capacity;
    /**
     * Mappings by directory slot, in pages of {@link #PAGE} slots made on first use: a directory may name 65536
     * regions, and a process with many peers should not pay a table of that size for each.
     */
    private final AtomicReferenceArray<AtomicReferenceArray<Mapped>> mapped;
    private static final int PAGE_SHIFT = 8;
    private static final int PAGE = 1 << PAGE_SHIFT;

    // ---- guarded by the fabric's peer table
    int references;
    /** When the last reference went (System.nanoTime), while {@link #references} is 0. */
    long idleSince;

    // ---- guarded by arenas: this fabric's ring arenas for connections it accepted from the peer
    private final ArrayList<ShmRingArena> arenas = new ArrayList<>();
    private boolean arenasClosed;

    // ---- guarded by this: the peer's ring arenas mapped here, most recent first
    private final ArrayList<Mapped> peerArenas = new ArrayList<>();
    /** This process's descriptors of the peer's wakeup pipes, by ready-map rkey and peer descriptor (-1: unusable). */
    private final Map<Long, Integer> wakeupWriters = new java.util.HashMap<>();
    private boolean writersClosed;
    /** Mapped peer arenas kept for the next connection; a connection holds its own cell's buffer anyway. */
    private static final int PEER_ARENAS_KEPT = 8;

    ShmPeer(long pid, long nonce, ByteBuffer directory, int directoryFd, long directoryInode) {
        this.pid = pid;
        this.nonce = nonce;
        this.directory = directory;
        this.directoryFd = directoryFd;
        this.directoryInode = directoryInode;
        this.capacity = ShmRegionDirectoryDescriptor.capacity(directory);
        this.mapped = new AtomicReferenceArray<>((capacity + PAGE - 1) >>> PAGE_SHIFT);
    }

    /**
     * The peer's live region with {@code rkey} as a buffer whose index 0 is the region's first byte, mapping it on
     * first use; {@code null} when no live region has that key or {@code requiredAccess} is missing.
     */
    ByteBuffer region(int rkey, int requiredAccess) throws IOException {
        int slot = rkey & 0xffff;
        if (slot >= capacity) {
            return null;
        }
        long state = ShmRegionDirectoryDescriptor.getStateAcquire(directory, slot);
        int e = ShmRegionDirectoryDescriptor.entry(slot);
        if (!ShmRegionDirectoryDescriptor.isLive(state) || directory.getInt(e + RKEY) != rkey
            || (directory.getInt(e + ACCESS) & requiredAccess) != requiredAccess) {
            return null;
        }
        AtomicReferenceArray<Mapped> page = mapped.get(slot >>> PAGE_SHIFT);
        Mapped m = page == null ? null : page.get(slot & (PAGE - 1));
        if (m != null && m.state == state) {
            return m.memory;
        }
        return mapSlow(slot, state);
    }

    private synchronized ByteBuffer mapSlow(int slot, long state) throws IOException {
        AtomicReferenceArray<Mapped> page = mapped.get(slot >>> PAGE_SHIFT);
        if (page == null) {
            page = new AtomicReferenceArray<>(PAGE);
            mapped.set(slot >>> PAGE_SHIFT, page);
        }
        Mapped m = page.get(slot & (PAGE - 1));
        if (m != null && m.state == state) {
            return m.memory;
        }
        int e = ShmRegionDirectoryDescriptor.entry(slot);
        int length = directory.getInt(e + LENGTH);
        int fd = directory.getInt(e + FD);
        long inode = directory.getLong(e + INODE);
        ByteBuffer memory;
        try {
            memory = ShmFile.mapPeer(pid, fd, inode, length);
        } catch (IOException ex) {
            if (ShmRegionDirectoryDescriptor.getStateAcquire(directory, slot) != state) {
                return null; // deregistered meanwhile
            }
            throw ex;
        }
        // Re-read after opening: the owner retires the entry before closing the descriptor, so an unchanged state
        // proves the descriptor was still the region's file.
        if (ShmRegionDirectoryDescriptor.getStateAcquire(directory, slot) != state) {
            return null;
        }
        page.set(slot & (PAGE - 1), new Mapped(state, memory, fd, inode));
        return memory;
    }

    /** Whether the region with {@code rkey} is still live (checked again just before a copy into it). */
    boolean isLive(int rkey) {
        int slot = rkey & 0xffff;
        return slot < capacity && ShmRegionDirectoryDescriptor.isLive(
            ShmRegionDirectoryDescriptor.getStateAcquire(directory, slot))
            && directory.getInt(ShmRegionDirectoryDescriptor.entry(slot) + RKEY) == rkey;
    }

    /**
     * A zeroed cell for the rings of a connection accepted from this peer, in an arena of cells of
     * {@code cellLength} bytes (a new arena when all are taken).
     */
    ShmRingArena.Cell takeCell(ShmFabric fabric, int cellLength) throws IOException {
        synchronized (arenas) {
            if (arenasClosed) {
                throw new IOException("the peer process " + pid + " was released");
            }
            long now = System.nanoTime();
            for (ShmRingArena a : arenas) {
                ShmRingArena.Cell c = a.cellLength == cellLength ? a.take(now) : null;
                if (c != null) {
                    return c;
                }
            }
        }
        // Outside the lock: a file is made on the file thread. Another connection may make one meanwhile.
        ShmRingArena made = ShmRingArena.create(fabric, cellLength);
        synchronized (arenas) {
            if (arenasClosed) {
                made.file.close();
                throw new IOException("the peer process " + pid + " was released");
            }
            arenas.add(made);
            return made.take(System.nanoTime());
        }
    }

    /**
     * Gives a cell back: its connection's queue pair is destroyed (the cell rests before it is taken again). An arena
     * left with no connection closes when another remains, so a burst of connections does not keep its peak of
     * arenas (their descriptors, and the pages their cells touched, go with the last mapping).
     */
    void releaseCell(ShmRingArena.Cell cell) {
        ShmRingArena empty = null;
        synchronized (arenas) {
            cell.arena.release(cell, System.nanoTime());
            if (cell.arena.inUse() == 0 && arenas.size() > 1 && arenas.remove(cell.arena)) {
                empty = cell.arena;
            }
        }
        if (empty != null) {
            empty.file.close();
        }
    }

    /**
     * The fabric released this peer (no connection with it is left): the arenas' descriptors close, so the peer
     * can map them no more; mappings stay valid while a buffer of them is referenced.
     */
    void closeArenas() {
        List<ShmRingArena> closing;
        synchronized (arenas) {
            arenasClosed = true;
            closing = new ArrayList<>(arenas);
            arenas.clear();
        }
        for (ShmRingArena a : closing) {
            a.file.close();
        }
        List<Integer> writers;
        synchronized (this) {
            writersClosed = true;
            writers = new ArrayList<>(wakeupWriters.values());
            wakeupWriters.clear();
        }
        for (int fd : writers) {
            if (fd >= 0) {
                try {
                    ShmNatives.close(fd);
                } catch (IOException e) {
                    // closing: nothing to recover
                }
            }
        }
    }

    /**
     * A non-blocking descriptor of the peer's wakeup pipe that its ready map with {@code rkey} names as descriptor
     * {@code peerFd} in the peer's process, opened on first use and shared by every connection to that queue; -1
     * when there is none or it cannot be opened (not a pipe, gone, no librdmanio-shm): the socket's doorbell then.
     */
    synchronized int wakeupWriter(int rkey, int peerFd) {
        long key = ((long) rkey << 32) | (peerFd & 0xffffffffL);
        Integer known = wakeupWriters.get(key);
        if (known != null) {
            return known;
        }
        int fd = -1;
        if (peerFd >= 0 && !writersClosed && ShmNatives.available()) {
            try {
                fd = ShmNatives.openPipeWriter(ShmHost.descriptorPath(pid, peerFd));
            } catch (IOException | RuntimeException e) {
                fd = -1;
            }
        }
        if (!writersClosed) {
            wakeupWriters.put(key, fd);
        } else if (fd >= 0) {
            try {
                ShmNatives.close(fd);
            } catch (IOException e) {
                // closing
            }
            fd = -1;
        }
        return fd;
    }

    /** Adds this peer's arenas and their cells in use to {@code use} ({arenas, cells in use}). */
    void addArenaUse(int[] use) {
        synchronized (arenas) {
            use[0] += arenas.size();
            for (ShmRingArena a : arenas) {
                use[1] += a.inUse();
            }
        }
    }

    /** This fabric's own arena files, for the periodic check (grown back if the peer shrank an unsealed one). */
    List<ShmFile> arenaFiles() {
        synchronized (arenas) {
            List<ShmFile> files = new ArrayList<>(arenas.size());
            for (ShmRingArena a : arenas) {
                files.add(a.file);
            }
            return files;
        }
    }

    /**
     * {@code length} bytes of the peer's ring arena, open in the peer as descriptor {@code fd} with {@code inode},
     * mapped on first use and kept for later connections into the same arena.
     */
    synchronized ByteBuffer arena(int fd, long inode, int length) throws IOException {
        for (int i = 0; i < peerArenas.size(); i++) {
            Mapped m = peerArenas.get(i);
            if (m.fd == fd && m.inode == inode && m.memory.capacity() == length) {
                return m.memory;
            }
        }
        ByteBuffer memory = ShmFile.mapPeer(pid, fd, inode, length);
        peerArenas.add(0, new Mapped(0, memory, fd, inode));
        if (peerArenas.size() > PEER_ARENAS_KEPT) {
            peerArenas.remove(peerArenas.size() - 1);
        }
        return memory;
    }

    /**
     * Watcher, periodically: {@code null} when the peer's region directory and every region of it mapped here still
     * have their mapped lengths, else which file the peer shrank (grown back first, so that no access faults any
     * more). A file whose descriptor the peer closed (a deregistered region) is not checked.
     */
    String checkFiles() {
        String shrunk = shrunk(directoryFd, directoryInode, directory.capacity(), "region directory");
        Mapped[] arenasHere;
        synchronized (this) {
            arenasHere = peerArenas.toArray(new Mapped[0]);
        }
        for (int i = 0; i < arenasHere.length && shrunk == null; i++) {
            shrunk = shrunk(arenasHere[i].fd, arenasHere[i].inode, arenasHere[i].memory.capacity(), "ring arena");
        }
        for (int p = 0; p < mapped.length() && shrunk == null; p++) {
            AtomicReferenceArray<Mapped> page = mapped.get(p);
            for (int i = 0; page != null && i < PAGE && shrunk == null; i++) {
                Mapped m = page.get(i);
                if (m != null) {
                    int slot = (p << PAGE_SHIFT) | i;
                    shrunk = shrunk(m.fd, m.inode, m.memory.capacity(), "region file (slot " + slot + ")");
                }
            }
        }
        return shrunk;
    }

    private String shrunk(int fd, long inode, long length, String what) {
        Path path = ShmHost.descriptorPath(pid, fd);
        try {
            Map<String, Object> a = Files.readAttributes(path, "unix:ino,size");
            long size = (Long) a.get("size");
            if ((Long) a.get("ino") != inode || size >= length) {
                return null;
            }
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.allocate(1), length - 1);
            }
            return "process " + pid + " shrank its shared " + what + " to " + size + " bytes under a " + length
                + "-byte mapping (" + path + ")";
        } catch (IOException | RuntimeException e) {
            return null; // the descriptor is closed or the process is gone: its socket reports that
        }
    }

    static final int REMOTE_WRITE = MemoryRegion.REMOTE_WRITE;
    static final int LOCAL_WRITE = MemoryRegion.LOCAL_WRITE;
}
