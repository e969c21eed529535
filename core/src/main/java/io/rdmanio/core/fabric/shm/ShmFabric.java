package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.ResourceLimitException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The verbs model between processes of one host, with the strictness of the loopback fabric (see
 * {@link io.rdmanio.core.fabric.loopback.LoopbackFabric} for the model's rules; they hold here, with the
 * differences listed below).
 *
 * <h2>How it is carried</h2>
 * <ul>
 *   <li><b>Memory.</b> {@link #allocate} creates a file in the shm directory, maps it and unlinks it at once; the
 *       region lives on through its open descriptor, and its entry in this fabric's region directory (itself such
 *       a file, see {@link ShmRegionDirectoryDescriptor}) tells a peer where to find it
 *       ({@code /proc/PID/fd/FD}), its inode, key, length and access. {@link #register} accepts any direct buffer
 *       for local use only (the source of sends): a peer cannot map it, so receives into it and
 *       REMOTE_WRITE access are refused, naming {@link #allocate}.</li>
 *   <li><b>Queues.</b> Each connection has its rings (see {@link ShmRingsDescriptor}) in a cell of a ring arena
 *       the accepting side keeps per peer process ({@link ShmRingArena}): per direction, the receiver publishes its posted receives and the sender
 *       publishes completions. A send is carried out when it is posted: the sender takes the receiver's oldest
 *       posted receive, copies the payload straight into the receiver's mapped region and releases a completion
 *       record. Send completions are local.</li>
 *   <li><b>Setup and liveness.</b> A listener is a UNIX domain socket at {@code DIR/l-HOST-PORT.sock}. The
 *       connection-manager exchange runs over it and the socket stays open as the connection's liveness channel:
 *       when a process dies the kernel closes it and the survivor sees DISCONNECTED with its work flushed. The
 *       accepting side checks the peer's user (SO_PEERCRED), the kernel boot id and the shm directory's device
 *       and inode, and refuses a mismatch naming it.</li>
 *   <li><b>Completion queues and wakeups.</b> A producer marks the queue pair in the ready map of the consumer's
 *       completion queue ({@link ShmReadyMapDescriptor}), so a poll visits only queue pairs with completions. A
 *       consumer arms a flag in that map; a producer that finds it armed rings a one-byte doorbell on the
 *       socket, and this fabric's watcher thread ({@link ShmWatcher}) runs the armed notifier. Unarmed, the data
 *       path makes no system call.</li>
 *   <li><b>Files.</b> Every shared file is unlinked as soon as it is created and mapped, so a crash leaves none;
 *       files a process died between creating and unlinking (named with its pid) are swept when a fabric opens.
 *       Listener sockets are removed on close and at JVM exit ({@link RendezvousFiles}); those a killed process
 *       left are removed by the next bind in the directory, once provably stale.</li>
 * </ul>
 *
 * <h2>Differences from loopback</h2>
 * Sends are carried out at post time, so none is ever in flight when a connection fails and only
 * posted receives are flushed. Receive completions live in the per-connection ring (sized by maxRecvWr), so a
 * completion queue cannot overrun; its {@code entries} sizes its ready map and bounds the queue pairs it serves.
 * Nothing a peer writes into shared memory is trusted: ring and ready-map fields are checked where read and
 * periodically ({@link #CHECK_MILLIS}), and a ring that stops making sense, or a shared file shrunk under its
 * mapping, fails that connection with a protocol error.
 *
 * <p>Thread-safe. Lock order: a connection-manager id's lock, then its queue pair's lock; completion queues and
 * event channels take no lock on the data path; notifiers run outside every lock.
 */
public final class ShmFabric implements Fabric {

    /**
     * Regions a fabric may hold at once (directory slots): as many as an rkey can name. The directory file is
     * sparse, so a slot costs memory only once used (64 bytes); the table is not what limits a process's
     * connections (open files, mappings and /dev/shm space come first, and each is named when reached).
     */
    static final int DIRECTORY_CAPACITY = ShmRegionDirectoryDescriptor.MAX_CAPACITY;
    static final int MAX_QUEUE_DEPTH = ShmRingsDescriptor.MAX_CAPACITY;
    /** The largest inline send: the fabric copies every send at post time, so inline costs nothing extra. */
    static final int MAX_INLINE = 1 << 20;
    /**
     * How often the watcher checks the rings and shared files of this fabric's connections while it has any: the
     * bound on noticing a ring overwritten, or a file shrunk, while both ends are parked.
     */
    static final long CHECK_MILLIS = 500;
    /**
     * How long a peer no connection uses any more stays mapped here, with the ring arenas made for it: a process
     * that connects again soon (a connection per request) finds its files mapped and a cell ready, instead of
     * mapping the peer's region directory and making an arena again. Released by the periodic check after that.
     */
    static final long PEER_GRACE_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
    private static final Pattern OWNED_FILE = Pattern.compile("[rqd]-(\\d+)-\\d+");
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final AtomicInteger FABRIC_COUNTER = new AtomicInteger();

    final Path dir;
    final GroupPrincipal group;
    /** Completion queues offer wakeup pipes (see {@link ShmCompletionQueue#wakeupChannel()}). */
    final boolean wakeupChannels;
    final String bootId;
    final long dirDevice;
    final long dirInode;
    final int uid;
    final String userName;
    final long pid;
    /** Names this fabric to peers: a peer checks it in the files it maps. */
    final long nonce;
    private final ShmFile directory;
    private final AtomicLong fileCounter = new AtomicLong();
    /** {@link #sourceFor}'s answers by remote address (at most 256, then forgotten together). */
    private final java.util.concurrent.ConcurrentHashMap<InetAddress, InetAddress> sources =
        new java.util.concurrent.ConcurrentHashMap<>();
    private final AtomicLong receiverNotReady = new AtomicLong();
    private final AtomicLong doorbells = new AtomicLong();
    private final AtomicInteger nextQpNum = new AtomicInteger(0x21);
    private final AtomicInteger localKeys = new AtomicInteger();
    // ---- guarded by this
    /** Regions by directory slot; grown as slots are first used. */
    private ShmMemoryRegion[] slots = new ShmMemoryRegion[64];
    private int[] generations = new int[64];
    /** Slots used before and free now (a stack); slots from {@link #neverUsed} on were never used. */
    private int[] freeSlots = new int[64];
    private int freeCount;
    private int neverUsed;
    private final LinkedHashSet<Object> open = new LinkedHashSet<>();
    private final Map<Long, ShmPeer> peers = new HashMap<>();
    private ShmWatcher watcher;
    private boolean closed;
    /** Queue pairs attached to a ring: what the periodic check looks at. */
    private final LinkedHashSet<ShmQueuePair> live = new LinkedHashSet<>();
    private boolean checking;
    /**
     * Descriptors of /dev/null held back for the moments the process has its most open files: given up to refuse a
     * connect request with the reason, or to map a peer region (which opens two descriptors for a moment).
     */
    private FileChannel[] spare;
    static final int SPARE_DESCRIPTORS = 2;

    ShmFabric(Path dir, GroupPrincipal group) throws IOException {
        this(dir, group, true);
    }

    /**
     * @param wakeupChannels completion queues offer a wakeup pipe (with librdmanio-shm): a selector waiting on one is
     *     woken by the peer's ring itself, not through the watcher
     */
    ShmFabric(Path dir, GroupPrincipal group, boolean wakeupChannels) throws IOException {
        this.dir = dir;
        this.group = group;
        this.wakeupChannels = wakeupChannels;
        this.bootId = ShmHost.bootId();
        long[] devIno = ShmHost.deviceAndInode(dir);
        this.dirDevice = devIno[0];
        this.dirInode = devIno[1];
        this.uid = ShmHost.uid();
        this.userName = Files.getOwner(Path.of("/proc/self")).getName();
        this.pid = ShmHost.pid();
        this.nonce = RANDOM.nextLong();
        sweepDeadOwners(dir);
        openFiles = readOpenFilesLimit();
        directory = ShmFile.create(newFilePath('d'), ShmRegionDirectoryDescriptor.fileLength(DIRECTORY_CAPACITY),
            group);
        reserveSpareDescriptor();
        ShmRegionDirectoryDescriptor.writeHeader(directory.buffer, nonce, DIRECTORY_CAPACITY);
    }

    /** Deletes files that a process died holding between creating and unlinking them (named with its pid). */
    static void sweepDeadOwners(Path dir) {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path p : entries) {
                Matcher m = OWNED_FILE.matcher(p.getFileName().toString());
                if (m.matches() && ShmHost.isGone(Long.parseLong(m.group(1)))) {
                    Files.deleteIfExists(p);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // a sweep is best effort: a file it misses is swept by the next open
        }
    }

    Path newFilePath(char kind) {
        return dir.resolve(kind + "-" + pid + "-" + fileCounter.incrementAndGet());
    }

    @Override
    public String name() {
        return ShmFabricProvider.NAME;
    }

    /**
     * 64 KiB. Slot memory is pages of files under the shm directory, backed only where a frame was written, so a
     * connection of small messages costs the pages it touches; a stream moves four times fewer frames than with
     * 16 KiB slots (measured: 1 MiB writes between two JVMs went from about 7 to about 16 GB/s).
     */
    /** 1 MiB, more than a slot: every send is copied at post time anyway, so inline costs nothing extra here. */
    @Override
    public int maxInlineData() {
        return MAX_INLINE;
    }

    @Override
    public int preferredSlotSize() {
        return 65536;
    }

    /**
     * 64 MiB: pool memory is sparse files, backed only where a frame was written, so one region serves a thousand
     * slots (about fifteen connections at the defaults) for one descriptor and one mapping, where 4 MiB regions
     * cost each connection a descriptor and a mapping in both processes.
     */
    @Override
    public int preferredAllocationSize() {
        return 64 << 20;
    }

    /** The shm directory of this fabric. */
    public Path directory() {
        return dir;
    }

    /** How many times a send arrived where no receive was posted, on this fabric's connections. */
    public long receiverNotReadyCount() {
        return receiverNotReady.get();
    }

    void receiverNotReady() {
        receiverNotReady.incrementAndGet();
    }

    /**
     * How many doorbells this fabric's senders rang: one per completion released to a peer that had armed its
     * queue, none while the peer polls without arming (the data path then makes no system call).
     */
    public long doorbellCount() {
        return doorbells.get();
    }

    void doorbellRung() {
        doorbells.incrementAndGet();
    }

    int nextQpNum() {
        return nextQpNum.getAndIncrement() & 0xffffff;
    }

    int directoryFd() {
        return directory.fd;
    }

    long directoryInode() {
        return directory.inode;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Memory.

    private static void ensureAccess(int access) {
        int known = MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_WRITE | MemoryRegion.REMOTE_READ;
        if ((access & ~known) != 0) {
            throw new IllegalArgumentException("unknown access bits 0x" + Integer.toHexString(access & ~known));
        }
        if ((access & MemoryRegion.REMOTE_WRITE) != 0 && (access & MemoryRegion.LOCAL_WRITE) == 0) {
            throw new IllegalArgumentException("REMOTE_WRITE access requires LOCAL_WRITE too (as in verbs)");
        }
    }

    /**
     * Registers a direct buffer for local use: the source of sends. A peer process cannot map it, so
     * REMOTE_WRITE is refused and receives into it are refused; memory peers reach comes from {@link #allocate}.
     */
    @Override
    public MemoryRegion register(ByteBuffer buffer, int access) throws IOException {
        Objects.requireNonNull(buffer, "buffer");
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("only direct buffers can be registered: a heap buffer may move");
        }
        if (buffer.isReadOnly()) {
            throw new IllegalArgumentException("a read-only buffer cannot be registered");
        }
        ensureAccess(access);
        if ((access & (MemoryRegion.REMOTE_WRITE | MemoryRegion.REMOTE_READ)) != 0) {
            throw new FabricException("the shm fabric cannot grant remote access to memory it did not allocate (a"
                + " peer process cannot map an arbitrary buffer): use Fabric.allocate for regions peers reach");
        }
        if (!buffer.hasRemaining()) {
            throw new IllegalArgumentException("cannot register an empty range (position == limit)");
        }
        int k = localKeys.incrementAndGet();
        // Local keys have bit 31 set and a slot beyond the directory: no peer lookup ever matches one.
        int key = 0x8000_0000 | (k << 16) | 0xffff;
        long address = 0x7f00_0000_0000L + ((long) (k & 0xffff) << 32);
        synchronized (this) {
            ensureOpen();
            ShmMemoryRegion region = new ShmMemoryRegion(this, buffer.slice(), null, -1, 0, address, key, key,
                access);
            open.add(region);
            return region;
        }
    }

    /** Allocates a region in a shared file that peer processes map; see the class comment. */
    @Override
    public MemoryRegion allocate(int length, int access) throws IOException {
        if (length <= 0) {
            throw new IllegalArgumentException("region length must be positive: " + length);
        }
        ensureAccess(access);
        int slot;
        long generation;
        synchronized (this) {
            ensureOpen();
            slot = takeSlot();
            generation = generations[slot] = (generations[slot] + 1) & 0xffff;
        }
        ShmFile file;
        try {
            file = ShmFile.create(newFilePath('r'), length, group);
        } catch (IOException | RuntimeException e) {
            synchronized (this) {
                freeSlots[freeCount++] = slot;
            }
            throw limitReached(e, "cannot allocate a shared region of " + length + " bytes in " + dir);
        }
        int rkey = (int) (generation << 16) | slot;
        int lkey = rkey ^ 0x4000_0000;
        long address = (long) (slot + 1) << 32;
        ShmMemoryRegion region = new ShmMemoryRegion(this, file.buffer, file, slot, generation, address, lkey, rkey,
            access);
        synchronized (this) {
            if (closed) {
                file.close();
                freeSlots[freeCount++] = slot;
                throw new FabricException("the shm fabric is closed");
            }
            slots[slot] = region;
            open.add(region);
            ShmRegionDirectoryDescriptor.writeAndReleaseLive(directory.buffer, slot, generation, rkey, access,
                length, file.fd, address, file.inode);
        }
        return region;
    }

    /**
     * The exception for a shared file that could not be created or mapped: a {@link ResourceLimitException}
     * naming the limit when the cause is one (descriptors, mappings, /dev/shm space), else {@code what} and the
     * cause.
     */
    static FabricException limitReached(Throwable e, String what) {
        String m = String.valueOf(e.getMessage()) + (e.getCause() == null ? "" : " " + e.getCause().getMessage());
        if (m.contains("Too many open files")) {
            String max = openFilesLimit();
            return new ResourceLimitException("open files " + max, what + ": the process has its most open"
                + " files (" + max + ", ulimit -n; each shm region and connection holds descriptors)", e);
        }
        if (m.contains("No space left on device")) {
            return new ResourceLimitException("no space in shm dir", what + ": the file system of the shm"
                + " directory is full (a tmpfs such as /dev/shm is sized at mount time)", e);
        }
        if (m.contains("Map failed") || m.contains("Cannot allocate memory") || e instanceof OutOfMemoryError) {
            return new ResourceLimitException("mappings or memory", what + ": the mapping failed: the process"
                + " reached vm.max_map_count mappings or the machine is out of memory (" + m + ")", e);
        }
        return new FabricException(what + ": " + e, e);
    }

    /**
     * The soft limit of open files: read when a fabric opens, since reading it takes a descriptor, which is just
     * what a process at its limit lacks.
     */
    private static volatile String openFiles = "?";

    private static String openFilesLimit() {
        String now = readOpenFilesLimit();
        return now.equals("?") ? openFiles : now;
    }

    /** The soft limit of open files, from /proc/self/limits, or "?". */
    private static String readOpenFilesLimit() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max open files")) {
                    String[] f = line.substring("Max open files".length()).trim().split("\\s+");
                    return f[0];
                }
            }
        } catch (IOException | RuntimeException ex) {
            // unknown: said as such
        }
        return "?";
    }

    /**
     * Closes the spare descriptors, so that {@link #SPARE_DESCRIPTORS} descriptors are free; false if there were
     * none.
     */
    synchronized boolean releaseSpareDescriptor() {
        if (spare == null) {
            return false;
        }
        for (FileChannel c : spare) {
            try {
                c.close();
            } catch (IOException e) {
                // closed anyway
            }
        }
        spare = null;
        return true;
    }

    /**
     * {@code action} once more with the spare descriptors given up for it, when its first attempt failed for want
     * of a descriptor ({@code first}); else {@code first} is thrown. One such retry at a time.
     */
    <T> T withSpareDescriptor(IoAction<T> action, IOException first) throws IOException {
        if (!String.valueOf(first.getMessage()).contains("Too many open files")) {
            throw first;
        }
        synchronized (spareLock) {
            if (!releaseSpareDescriptor()) {
                throw first;
            }
            try {
                return action.run();
            } finally {
                reserveSpareDescriptor();
            }
        }
    }

    /** An action that may fail with an {@link IOException}. */
    interface IoAction<T> {
        T run() throws IOException;
    }

    private final Object spareLock = new Object();

    /**
     * Opens the spare descriptors again (best effort: without them, a refusal for descriptors goes unsaid, and a
     * peer region met first at the limit cannot be mapped).
     */
    synchronized void reserveSpareDescriptor() {
        if (spare == null && !closed) {
            FileChannel[] opened = new FileChannel[SPARE_DESCRIPTORS];
            try {
                for (int i = 0; i < opened.length; i++) {
                    opened[i] = FileChannel.open(Path.of("/dev/null"));
                }
                spare = opened;
            } catch (IOException e) {
                for (FileChannel c : opened) {
                    if (c != null) {
                        try {
                            c.close();
                        } catch (IOException ignored) {
                            // closing
                        }
                    }
                }
            }
        }
    }

    /** A free directory slot (under this fabric's lock), growing the tables on first use of a slot. */
    private int takeSlot() throws ResourceLimitException {
        if (freeCount > 0) {
            return freeSlots[--freeCount];
        }
        if (neverUsed == DIRECTORY_CAPACITY) {
            throw new ResourceLimitException("shm regions " + DIRECTORY_CAPACITY, "the shm fabric holds "
                + DIRECTORY_CAPACITY + " regions at most (an rkey names its directory slot in 16 bits), and every"
                + " one is in use: close connections or regions no longer used", null);
        }
        int slot = neverUsed++;
        if (slot == slots.length) {
            int n = Math.min(DIRECTORY_CAPACITY, slots.length * 2);
            slots = Arrays.copyOf(slots, n);
            generations = Arrays.copyOf(generations, n);
            freeSlots = Arrays.copyOf(freeSlots, n);
        }
        generations[slot] = RANDOM.nextInt(0x10000);
        return slot;
    }

    void deregistered(ShmMemoryRegion region) {
        synchronized (this) {
            open.remove(region);
            if (region.slot >= 0 && slots[region.slot] == region) {
                ShmRegionDirectoryDescriptor.releaseFree(directory.buffer, region.slot, region.generation);
                slots[region.slot] = null;
                freeSlots[freeCount++] = region.slot;
            }
        }
        if (region.file != null) {
            region.file.close();
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Peers.

    /** The peer fabric with {@code nonce} in process {@code pid}, mapping its directory on first use. */
    ShmPeer acquirePeer(long peerPid, long peerNonce, int dirFd, long dirInode) throws IOException {
        synchronized (this) {
            ShmPeer p = peers.get(peerNonce);
            if (p != null) {
                p.references++;
                return p;
            }
        }
        ByteBuffer mapped = ShmFile.mapPeer(peerPid, dirFd, dirInode, ShmRegionDirectoryDescriptor.HEADER_LENGTH);
        int length = ShmRegionDirectoryDescriptor.fileLength(ShmRegionDirectoryDescriptor.capacity(mapped));
        mapped = ShmFile.mapPeer(peerPid, dirFd, dirInode, length);
        String bad = ShmRegionDirectoryDescriptor.checkHeader(mapped, peerNonce);
        if (bad != null) {
            throw new IOException(bad);
        }
        synchronized (this) {
            ShmPeer p = peers.get(peerNonce);
            if (p == null) {
                p = new ShmPeer(peerPid, peerNonce, mapped, dirFd, dirInode);
                peers.put(peerNonce, p);
            }
            p.references++;
            return p;
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // The periodic check.

    /** A queue pair joined its ring: the periodic check starts if it is not running. */
    void attached(ShmQueuePair qp) {
        ShmWatcher w;
        synchronized (this) {
            if (closed) {
                return;
            }
            if (qp.state() == ShmQueuePair.STATE_DESTROYED) {
                return; // destroyed while it attached: never checked, never held
            }
            live.add(qp);
            if (checking) {
                return;
            }
            checking = true;
            w = watcher;
        }
        if (w != null) {
            w.schedule(this::check, CHECK_MILLIS);
        }
    }

    /** The queue pairs attached to a ring now (for tests that play a hostile peer). */
    synchronized ShmQueuePair[] liveQueuePairs() {
        return live.toArray(new ShmQueuePair[0]);
    }

    /** The shared regions this fabric allocated and still holds (for tests that play a hostile peer). */
    synchronized ShmMemoryRegion[] sharedRegions() {
        return open.stream().filter(o -> o instanceof ShmMemoryRegion r && r.file != null)
            .toArray(ShmMemoryRegion[]::new);
    }

    /** The completion queues of this fabric not yet closed (their ready maps are shared regions). */
    synchronized ShmCompletionQueue[] completionQueues() {
        return open.stream().filter(o -> o instanceof ShmCompletionQueue).toArray(ShmCompletionQueue[]::new);
    }

    synchronized void detached(ShmQueuePair qp) {
        live.remove(qp);
    }

    /**
     * Watcher, every {@link #CHECK_MILLIS} while connections exist or a peer is kept after its last one: peers
     * unused for {@link #PEER_GRACE_NANOS} are released (their arenas closed), then files shrunk under their
     * mappings (this fabric's own, grown back at once so that no further access faults, and each peer's, whose
     * connections fail naming the file), the ready maps of this fabric's completion queues, then each connection's
     * ring. Returns false, stopping, when there is nothing to check.
     */
    private boolean check() {
        ShmQueuePair[] qps;
        ShmPeer[] ps;
        ShmMemoryRegion[] own;
        ShmCompletionQueue[] cqs;
        List<ShmPeer> expired = new ArrayList<>();
        synchronized (this) {
            long now = System.nanoTime();
            boolean kept = false;
            for (java.util.Iterator<ShmPeer> it = peers.values().iterator(); it.hasNext(); ) {
                ShmPeer p = it.next();
                if (p.references == 0) {
                    if (closed || now - p.idleSince >= PEER_GRACE_NANOS) {
                        it.remove();
                        expired.add(p);
                    } else {
                        kept = true;
                    }
                }
            }
            if (closed || (live.isEmpty() && !kept)) {
                checking = false;
                qps = null;
                ps = null;
                own = null;
                cqs = null;
            } else {
                qps = live.toArray(new ShmQueuePair[0]);
                ps = peers.values().toArray(new ShmPeer[0]);
                own = sharedRegions();
                cqs = completionQueues();
            }
        }
        for (ShmPeer p : expired) {
            p.closeArenas();
        }
        if (qps == null) {
            return false;
        }
        directory.ensureNotShrunk();
        for (ShmMemoryRegion r : own) {
            r.file.ensureNotShrunk();
        }
        for (ShmPeer p : ps) {
            for (ShmFile arena : p.arenaFiles()) {
                arena.ensureNotShrunk();
            }
        }
        for (ShmCompletionQueue cq : cqs) {
            cq.check();
        }
        for (ShmPeer p : ps) {
            String shrunk = p.checkFiles();
            if (shrunk != null) {
                for (ShmQueuePair qp : qps) {
                    if (qp.peer() == p) {
                        qp.failBroken(shrunk);
                    }
                }
            }
        }
        for (ShmQueuePair qp : qps) {
            qp.check();
        }
        return true;
    }

    void releasePeer(ShmPeer peer) {
        ShmWatcher w = null;
        synchronized (this) {
            if (--peer.references != 0) {
                return;
            }
            if (!closed && peers.get(peer.nonce) == peer && (checking || watcher != null)) {
                // Kept for PEER_GRACE_NANOS; the periodic check runs until it is released.
                peer.idleSince = System.nanoTime();
                if (checking) {
                    return;
                }
                checking = true;
                w = watcher;
            } else {
                peers.remove(peer.nonce, peer);
            }
        }
        if (w != null) {
            w.schedule(this::check, CHECK_MILLIS);
        } else {
            peer.closeArenas();
        }
    }

    /** The peers some connection of this fabric uses (not those kept for a while after the last one). */
    synchronized int peerCount() {
        int n = 0;
        for (ShmPeer p : peers.values()) {
            if (p.references > 0) {
                n++;
            }
        }
        return n;
    }

    /** The ring arenas this fabric holds for the connections it accepted, and their cells in use. */
    synchronized int[] ringArenaUse() {
        int[] use = new int[2];
        for (ShmPeer p : peers.values()) {
            p.addArenaUse(use);
        }
        return use;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Factories.

    @Override
    public CompletionQueue createCompletionQueue(int entries) throws IOException {
        if (entries < 1 || entries > MAX_QUEUE_DEPTH * 4) {
            throw new FabricException("completion queue entries must be between 1 and " + MAX_QUEUE_DEPTH * 4
                + ": " + entries);
        }
        ShmCompletionQueue cq = new ShmCompletionQueue(this, entries);
        opened(cq);
        return cq;
    }

    @Override
    public EventChannel createEventChannel() throws IOException {
        ShmEventChannel channel = new ShmEventChannel(this);
        opened(channel);
        return channel;
    }

    @Override
    public CmId createId(EventChannel events) throws IOException {
        if (!(events instanceof ShmEventChannel channel) || channel.fabric != this) {
            throw new IllegalArgumentException("the event channel must come from this shm fabric");
        }
        ShmCmId id = new ShmCmId(this, channel);
        opened(id);
        return id;
    }

    synchronized void opened(Object object) throws FabricException {
        ensureOpen();
        open.add(object);
    }

    synchronized void closed(Object object) {
        open.remove(object);
    }

    /** The watcher thread, started on first use. */
    synchronized ShmWatcher watcher() throws IOException {
        ensureOpen();
        if (watcher == null) {
            watcher = new ShmWatcher("rdmanio-shm-watcher-" + FABRIC_COUNTER.incrementAndGet());
            if (checking) {
                watcher.schedule(this::check, CHECK_MILLIS);
            }
        }
        return watcher;
    }

    /** The watcher thread if it was started, else null. */
    synchronized ShmWatcher startedWatcher() {
        return watcher;
    }

    private void ensureOpen() throws FabricException {
        if (closed) {
            throw new FabricException("the shm fabric is closed");
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Rendezvous paths.

    /** The rendezvous socket of a listener bound to {@code address}. */
    Path rendezvousPath(InetSocketAddress address) {
        return dir.resolve("l-" + hostPart(address.getAddress()) + "-" + address.getPort() + ".sock");
    }

    /** Candidate rendezvous sockets for a connect to {@code address}: the address itself, then wildcards. */
    List<Path> rendezvousCandidates(InetSocketAddress address) {
        List<Path> list = new ArrayList<>(3);
        list.add(rendezvousPath(address));
        int port = address.getPort();
        list.add(dir.resolve("l-0.0.0.0-" + port + ".sock"));
        list.add(dir.resolve("l-" + hostPart(new InetSocketAddress("::", 0).getAddress()) + "-" + port + ".sock"));
        return list;
    }

    private static String hostPart(InetAddress address) {
        return address.getHostAddress().replace(':', '_').replace('%', '_');
    }

    // ---------------------------------------------------------------------------------------------------------

    /** Closes every id (disconnecting it), then the completion queues, channels, regions and the watcher. */
    @Override
    public void close() {
        List<Object> all;
        List<ShmPeer> ps;
        ShmWatcher w;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            all = new ArrayList<>(open);
            ps = new ArrayList<>(peers.values());
            w = watcher;
        }
        for (Object o : all) {
            if (o instanceof ShmCmId id) {
                id.close();
            }
        }
        for (Object o : all) {
            if (o instanceof ShmCompletionQueue cq) {
                cq.close();
            } else if (o instanceof ShmEventChannel channel) {
                channel.close();
            } else if (o instanceof ShmMemoryRegion region) {
                region.close();
            }
        }
        for (ShmPeer p : ps) {
            p.closeArenas();
        }
        if (w != null) {
            w.close();
        }
        directory.close();
        releaseSpareDescriptor();
    }

    @Override
    public String toString() {
        return "shm fabric at " + dir;
    }

    /**
     * The address this host sends from to reach {@code remote}, as the kernel picks a TCP connection's source: the
     * loopback of the family for a loopback or wildcard one, else the route's source, asked of the kernel once per
     * remote address through a connected UDP socket (which sends nothing). A peer in another network namespace of
     * this host (sharing /dev/shm) is so reached from this namespace's address, as over TCP, not from its own.
     */
    InetAddress sourceFor(InetAddress remote) {
        if (remote.isLoopbackAddress() || remote.isAnyLocalAddress()) {
            return Fabrics.localSourceFor(remote);
        }
        InetAddress known = sources.get(remote);
        if (known != null) {
            return known;
        }
        InetAddress found = remote;
        try (DatagramChannel probe = ShmWatcher.jdkProvider().openDatagramChannel()) {
            probe.connect(new InetSocketAddress(remote, 9));
            InetAddress picked = ((InetSocketAddress) probe.getLocalAddress()).getAddress();
            if (!picked.isAnyLocalAddress()) {
                found = picked;
            }
        } catch (IOException | RuntimeException noRoute) {
            // No route from here: the address dialled, a local one on this host.
        }
        if (sources.size() >= 256) {
            sources.clear();
        }
        sources.put(remote, found);
        return found;
    }

    /**
     * A local port for a connecting id that bound none, held by a kernel TCP socket bound to the wildcard address
     * and port 0 until the id closes: the kernel's ephemeral port, free on every address of this host, so that no
     * two live connections show a server the same address, from this process or another, over shm or TCP (a
     * server that keys its clients by address would otherwise mix two up), as TCP's 4-tuples are unique. The
     * wildcard, not the connection's source: a peer in another network namespace of the host shares /dev/shm but
     * not its addresses, so the source may not be local here. When the kernel has no port left, the bind's error
     * (as a TCP connect's) is the connect's.
     */
    SocketChannel holdEphemeralPort() throws IOException {
        SocketChannel holder = ShmWatcher.jdkProvider().openSocketChannel();
        try {
            holder.bind(new InetSocketAddress(0));
            return holder;
        } catch (IOException | RuntimeException e) {
            try {
                holder.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }
}
