package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * An shm connection-manager id. A listener is a UNIX domain socket in the shm directory; each connection keeps
 * its own socket open for life, carrying the exchange below and then doorbells, and its end-of-file is how a
 * dead peer is noticed.
 *
 * <pre>{@code
 *   connecting side                      accepting side
 *   connect(): REQUEST  ---------------> checks user (SO_PEERCRED), boot id, shm directory; CONNECT_REQUEST
 *                       <--------------- accept(): takes a cell of its ring arena for this peer, publishes its
 *                                        receives: ACCEPT (the arena's descriptor and the cell's offset)
 *   maps the arena (once per arena), publishes its receives
 *              READY    ---------------> ESTABLISHED (the listener's side: acceptable from now on)
 *   ESTABLISHED         <--------------- UP
 *                       <--------------- or reject(): REJECT (private data)
 *   either side: DISCONNECT (cause)  <-> the other answers DISCONNECT; the socket closes after both
 * }</pre>
 *
 * <p>Thread-safe: state changes happen under this id's monitor, which is taken before its queue pair's lock and
 * never held while an event is posted or a notifier runs. Ids created for incoming requests deliver their events
 * on the listener's channel, as rdma_cm does.
 */
final class ShmCmId implements CmId, ShmLink.Receiver {

    /** The JDK's platform logger: the fabric runs where no logging library is (a peer process of the tests). */
    private static final System.Logger LOG = System.getLogger(ShmCmId.class.getName());

    static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();
    static final int MAGIC = 0x53484d43; // "SHMC"
    /**
     * 3: the connecting side reports ESTABLISHED once the accepting side says UP (2: at READY; the rings are a cell
     * of the accepting side's ring arena since 2, a file per connection in 1).
     */
    static final int VERSION = 3;
    /** How {@link ShmLink} names a message it could not take, in the cause it gives {@link #endOfFile}. */
    static final String BAD_MESSAGE = "bad message from the peer: ";

    private static final int IDLE = 0;
    private static final int BOUND = 1;
    private static final int LISTENING = 2;
    private static final int CONNECTING = 3;
    private static final int REQUESTED = 4;
    /** Passive side: accepted, waiting for the peer to map the rings. */
    private static final int ACCEPTING = 5;
    private static final int CONNECTED = 6;
    /** The connection failed or was disconnected. */
    private static final int DISCONNECTED = 7;
    private static final int REFUSED = 8;
    private static final int CLOSED = 9;

    /** The pending-request bound of a listener whose application gave no backlog (as the JDK's). */
    private static final int DEFAULT_BACKLOG = 50;
    /**
     * The kernel queue of a rendezvous socket: as deep as the kernel allows ({@code net.core.somaxconn}). It only
     * hands connections to the watcher, which accepts them at once; the application's backlog bounds the requests
     * that wait for the engine ({@link #listen}), so a burst of connects (virtual threads start hundreds at once)
     * is not turned away by a queue the application never sized.
     */
    private static final int RENDEZVOUS_BACKLOG = Integer.MAX_VALUE;
    /** How long a connect waits for room in a listener's full kernel queue before it is refused. */
    static final long CONNECT_WAIT_NANOS = TimeUnit.SECONDS.toNanos(3);
    private static final SecureRandom RANDOM = new SecureRandom();

    final ShmFabric fabric;
    final ShmEventChannel channel;

    // ---- guarded by this
    private int state = IDLE;
    private volatile InetSocketAddress local;
    private volatile InetSocketAddress remote;
    private String refusal = "refused";
    private volatile ShmQueuePair qp;
    private ShmLink link;
    /** Listener (or a bound id): its socket, the socket file and that file's inode (to remove only our own). */
    private ServerSocketChannel server;
    private Path socketPath;
    private long socketInode;
    private int backlog;
    /** The kernel socket holding the port {@link ShmFabric#holdEphemeralPort} gave this connecting id; closed with it. */
    private SocketChannel portHolder;
    private final List<ShmCmId> pending = new ArrayList<>();
    private final List<ShmLink> unrequested = new ArrayList<>();
    /** Passive side: the listener, and the peer as its request described it. */
    private ShmCmId listener;
    private long peerPid;
    private long peerNonce;
    private int peerDirFd;
    private long peerDirInode;
    private int peerCapacity;
    private boolean sentDisconnect;
    private boolean receivedDisconnect;
    private boolean reportedDisconnect;
    /**
     * Connecting side: ESTABLISHED, held from READY until the accepting side says UP, so that the listener has the
     * connection to accept before this side's connect completes, as the kernel's TCP has on loopback.
     */
    private CmEvent establishing;

    ShmCmId(ShmFabric fabric, ShmEventChannel channel) {
        this.fabric = fabric;
        this.channel = channel;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Binding and listening.

    @Override
    public void bind(InetSocketAddress address) throws IOException {
        Objects.requireNonNull(address, "address");
        if (address.isUnresolved()) {
            throw new FabricException("cannot bind to unresolved address " + address);
        }
        synchronized (this) {
            ensureState(IDLE, "bind");
            if (address.getPort() != 0) {
                bindSocket(address);
            } else {
                BindException last = null;
                for (int attempt = 0; attempt < 256 && server == null; attempt++) {
                    int port = ThreadLocalRandom.current().nextInt(32768, 61000);
                    try {
                        bindSocket(new InetSocketAddress(address.getAddress(), port));
                    } catch (BindException e) {
                        last = e;
                    }
                }
                if (server == null) {
                    throw last;
                }
            }
            state = BOUND;
        }
        fabric.watcher().register(server, SelectionKey.OP_ACCEPT, key -> acceptReady());
    }

    /** Binds the rendezvous socket of {@code address}, replacing a stale one a dead process left behind. */
    private void bindSocket(InetSocketAddress address) throws IOException {
        Path path = fabric.rendezvousPath(address);
        ServerSocketChannel ss = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            try {
                ss.bind(UnixDomainSocketAddress.of(path), RENDEZVOUS_BACKLOG);
            } catch (BindException e) {
                replaceStaleSocket(ss, path, address);
            }
            Files.setPosixFilePermissions(path, fabric.group == null ? ShmFile.OWNER_ONLY : ShmFile.OWNER_AND_GROUP);
            if (fabric.group != null) {
                Files.setAttribute(path, "posix:group", fabric.group);
            }
            ss.configureBlocking(false);
            socketInode = ShmHost.inode(path);
        } catch (IOException | RuntimeException e) {
            ss.close();
            throw e;
        }
        server = ss;
        socketPath = path;
        local = address;
        RendezvousFiles.bound(path, socketInode);
        sweepStaleSockets(path);
    }

    /** Serializes stale-socket removal among the threads of this JVM (the file lock covers processes). */
    private static final Object REPLACE_LOCK = new Object();

    /** The directory's bind lock file ({@code DIR/.bind.lock}); its file lock serializes binds across processes. */
    private FileChannel openBindLock() throws IOException {
        return FileChannel.open(fabric.dir.resolve(".bind.lock"),
            Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
            PosixFilePermissions.asFileAttribute(ShmFile.OWNER_ONLY));
    }

    /**
     * Binds {@code ss} to {@code path}, which exists: a live listener there makes it a {@link BindException}; a
     * provably stale one (see {@link #staleness}) is removed first. Check, removal and bind happen under the bind
     * lock, so two processes replacing the same stale socket cannot remove each other's.
     */
    private void replaceStaleSocket(ServerSocketChannel ss, Path path, InetSocketAddress address) throws IOException {
        synchronized (REPLACE_LOCK) {
            // The lock file's channel must survive the caller's interrupt; an attempt it cut short bound nothing
            // (and, if it had removed the stale file already, the next attempt finds none and just binds).
            Uninterruptibly.call(() -> replaceStaleSocketLocked(ss, path, address));
        }
    }

    private Void replaceStaleSocketLocked(ServerSocketChannel ss, Path path, InetSocketAddress address)
            throws IOException {
        try (FileChannel lockFile = openBindLock()) {
            lockFile.lock(); // released when the channel closes
            if (Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
                String live = staleness(path);
                if (live != null) {
                    throw new BindException("Address already in use: " + address + " (rendezvous socket " + path
                        + ": " + live + ")");
                }
                Files.deleteIfExists(path);
            }
            try {
                ss.bind(UnixDomainSocketAddress.of(path), RENDEZVOUS_BACKLOG);
            } catch (BindException again) {
                throw new BindException("Address already in use: " + address + " (rendezvous socket " + path
                    + " was bound by another process meanwhile)");
            }
        }
        return null;
    }

    /**
     * Null when {@code path} is provably stale: a socket file of this user on which a connect is refused
     * (ECONNREFUSED: no process listens on it) and to which no socket of this host is bound, else why it is kept.
     * A full queue (EAGAIN) is a live listener, and another user's file is never touched.
     */
    private String staleness(Path path) {
        try {
            Object owner = Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            if (!Integer.valueOf(fabric.uid).equals(owner)) {
                return "it belongs to uid " + owner + ", not to this process's uid " + fabric.uid;
            }
            if (!Files.readAttributes(path, BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS).isOther()) {
                return "it is not a socket";
            }
        } catch (IOException e) {
            return "it cannot be examined: " + e.getMessage();
        }
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            probe.configureBlocking(false);
            probe.connect(UnixDomainSocketAddress.of(path));
            return "a live shm listener serves it";
        } catch (ConnectException e) {
            // Refused: no process listens, or one is between bind and listen (the JDK's bind makes both calls).
            // A socket bound to the path is listed in /proc/net/unix from its bind on: then it is kept.
            Set<String> bound = RendezvousFiles.boundPathsOfThisHost();
            if (bound != null && bound.contains(path.toString())) {
                return "a socket is bound to it (a listener starting up)";
            }
            return null;
        } catch (IOException e) {
            return "a live shm listener serves it (" + e.getMessage() + ")";
        }
    }

    /**
     * Removes the rendezvous sockets in the directory that processes killed without a chance to remove them left
     * behind: only this user's, only those no socket of this host is bound to ({@code /proc/net/unix}), and only
     * after a connect to each is refused. Runs at each bind, under the bind lock; {@code ours} is skipped.
     */
    private void sweepStaleSockets(Path ours) {
        Set<String> boundPaths = RendezvousFiles.boundPathsOfThisHost();
        List<Path> candidates = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(fabric.dir, "l-*.sock")) {
            for (Path p : entries) {
                if (!p.equals(ours) && (boundPaths == null || !boundPaths.contains(p.toString()))) {
                    candidates.add(p);
                }
            }
        } catch (IOException | RuntimeException e) {
            return;
        }
        if (candidates.isEmpty()) {
            return;
        }
        synchronized (REPLACE_LOCK) {
            try {
                // The lock file's channel must survive the caller's interrupt; a sweep cut short is run again.
                Uninterruptibly.call(() -> {
                    try (FileChannel lockFile = openBindLock()) {
                        lockFile.lock(); // released when the channel closes
                        for (Path p : candidates) {
                            try {
                                long inode = ShmHost.inode(p);
                                if (staleness(p) == null && ShmHost.inode(p) == inode) {
                                    Files.deleteIfExists(p);
                                }
                            } catch (ClosedByInterruptException e) {
                                throw e;
                            } catch (IOException e) {
                                // gone meanwhile
                            }
                        }
                    }
                    return null;
                });
            } catch (IOException | RuntimeException e) {
                // Best effort: a stale socket left now is removed by a later bind, or replaced by a bind of its
                // own address.
            }
        }
    }

    @Override
    public void listen(int backlog) throws IOException {
        synchronized (this) {
            if (state == IDLE) {
                throw new FabricException("listen needs a bound id: bind first");
            }
            ensureState(BOUND, "listen");
            this.backlog = backlog < 1 ? DEFAULT_BACKLOG : backlog;
            state = LISTENING;
        }
    }

    /** Watcher: a peer connected to the rendezvous socket; it checks the user, then waits for the request. */
    private void acceptReady() {
        SocketChannel ch;
        ServerSocketChannel ss;
        synchronized (this) {
            ss = server;
        }
        if (ss == null) {
            return;
        }
        try {
            ch = ss.accept();
            if (ch == null) {
                return;
            }
            ch.configureBlocking(false);
        } catch (IOException e) {
            if (String.valueOf(e.getMessage()).contains("Too many open files")) {
                refuseForDescriptors(ss, e);
            }
            return;
        }
        ShmLink accepted = new ShmLink(ch, this);
        String refusal = peerUserRefusal(ch);
        synchronized (this) {
            if (refusal == null && state != LISTENING) {
                refusal = "connection refused: no listener at " + local + " on the shm fabric (bound, not listening)";
            }
            if (refusal == null) {
                unrequested.add(accepted);
            }
        }
        if (refusal != null) {
            accepted.trySend(ShmLink.REJECT, rejectBody(refusal, EMPTY));
            accepted.close();
            return;
        }
        registerLink(accepted);
    }

    /**
     * The process has its most open files, so the request waiting at the listener socket cannot even be accepted:
     * the fabric's spare descriptor is given up for a moment to accept it and tell the client why (else it would
     * wait for an answer that never comes, and the watcher would find the socket ready again and again).
     */
    private void refuseForDescriptors(ServerSocketChannel ss, IOException cause) {
        FabricException limit = ShmFabric.limitReached(cause, "cannot accept a connect request at " + local);
        try {
            LOG.log(System.Logger.Level.WARNING, "refused a connect request at " + local + ": " + limit.getMessage());
        } catch (RuntimeException | Error e) {
            // A logger's first message may need a file (time zone data) the process cannot open now: the refusal
            // itself matters more.
        }
        if (!fabric.releaseSpareDescriptor()) {
            return;
        }
        try {
            SocketChannel ch = ss.accept();
            if (ch != null) {
                ShmLink l = new ShmLink(ch, this);
                l.trySend(ShmLink.REJECT, rejectBody("connection refused: the listener's process at " + local
                    + " reached a limit: " + limit.getMessage(), EMPTY));
                l.close();
            }
        } catch (IOException e) {
            // still no descriptor: the next readiness tries again
        } finally {
            fabric.reserveSpareDescriptor();
        }
    }

    private String peerUserRefusal(SocketChannel ch) {
        try {
            UnixDomainPrincipal principal = ch.getOption(ExtendedSocketOptions.SO_PEERCRED);
            return userRefusal(fabric.uid, fabric.userName, principal.user().getName());
        } catch (IOException | UnsupportedOperationException e) {
            return "connection refused: the peer's credentials cannot be read (SO_PEERCRED): " + e;
        }
    }

    /** {@code null} when a peer of user {@code peerUser} may connect to a fabric of user {@code ourName}. */
    static String userRefusal(int ourUid, String ourName, String peerUser) {
        // The JDK names the user by its uid when the name cannot be looked up (as when this process has its most
        // open files and cannot read the user database): the same uid is the same user.
        if (peerUser.equals(ourName) || peerUser.equals(Integer.toString(ourUid))) {
            return null;
        }
        int peerUid = ShmHost.uidOfUserName(peerUser);
        return "connection refused: the connecting process runs as user " + peerUser + " (uid " + peerUid
            + "), not as this process's user " + ourName + " (uid " + ourUid + "); the shm fabric connects"
            + " processes of one user only";
    }

    private void registerLink(ShmLink l) {
        try {
            ShmWatcher w = fabric.watcher();
            l.watcher = w;
            w.register(l.channel, SelectionKey.OP_READ, key -> {
                if (!l.read()) {
                    key.cancel();
                    l.close();
                }
            });
        } catch (IOException e) {
            l.close();
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Connecting.

    @Override
    public synchronized void connectFrom(InetSocketAddress source) throws IOException {
        Objects.requireNonNull(source, "source");
        ensureState(IDLE, "connectFrom");
        // The caller's kernel socket holds the port; the peer sees it as this end's address (a wildcard one as
        // the address connect finds for the remote).
        local = source;
    }

    @Override
    public void connect(InetSocketAddress address, ByteBuffer privateData) throws IOException {
        Objects.requireNonNull(address, "address");
        ByteBuffer data = copyPrivateData(privateData);
        ShmQueuePair q;
        synchronized (this) {
            if (state != IDLE && state != BOUND) {
                throw new FabricException("connect refused: the id is " + stateName());
            }
            q = qp;
            if (q == null || q.state() != ShmQueuePair.STATE_INIT) {
                throw new FabricException("connect needs a fresh queue pair: call createQueuePair first");
            }
            remote = address;
            if (address.isUnresolved()) {
                state = REFUSED;
                refusal = "unreachable";
            } else {
                if (local == null) {
                    portHolder = fabric.holdEphemeralPort();
                    local = new InetSocketAddress(fabric.sourceFor(address.getAddress()),
                        ((InetSocketAddress) portHolder.getLocalAddress()).getPort());
                } else if (local.getAddress().isAnyLocalAddress()) {
                    local = new InetSocketAddress(fabric.sourceFor(address.getAddress()), local.getPort());
                }
                // No link yet: close and disconnect meanwhile end the attempt, which then finds the state changed.
                state = CONNECTING;
            }
        }
        if (address.isUnresolved()) {
            channel.post(new CmEvent(CmEvent.Type.UNREACHABLE, this, null, EMPTY,
                "cannot resolve " + address.getHostString() + " on the shm fabric"));
            return;
        }
        // Outside the monitor: reaching a listener whose kernel queue is full waits (bounded) for room.
        Reached reached = reachListener(address);
        CmEvent event = null;
        ShmLink l = null;
        SocketChannel ch = reached.channel;
        synchronized (this) {
            if (state != CONNECTING || link != null) {
                // Closed or abandoned while the socket was being reached.
                if (ch != null) {
                    ch.close();
                }
                return;
            }
            if (ch == null) {
                state = REFUSED;
                refusal = reached.refusal;
                event = new CmEvent(CmEvent.Type.REJECTED, this, null, EMPTY, reached.refusal);
            } else {
                try {
                    l = new ShmLink(ch, this);
                    link = l;
                    l.send(ShmLink.REQUEST, requestBody(address, q, data));
                } catch (IOException e) {
                    // The listener may have refused this process at once (another user, say) and closed before
                    // the request was written: its REJECT is still in the socket. The watcher reads it, or the
                    // end of file, so the refusal keeps its reason.
                }
            }
        }
        if (event != null) {
            channel.post(event);
        }
        if (l != null) {
            registerLink(l);
        }
    }

    /** A connected, non-blocking socket to a listener, or why there is none. */
    private record Reached(SocketChannel channel, String refusal) {
    }

    /**
     * Connects to the rendezvous socket of {@code address} (or of a wildcard listener on its port). A socket whose
     * kernel queue is full (EAGAIN: the listener's watcher has not accepted the connections before this one yet) is
     * tried again with growing pauses for at most {@link #CONNECT_WAIT_NANOS}, as TCP retries a SYN that a full
     * accept queue dropped. The refusal names what was found: no socket file, a file no process listens on (left by
     * a process that is gone), or a listener that stayed full.
     *
     * <p>The caller's interrupt reaches neither the sockets (they are non-blocking, and the work runs through
     * {@link Uninterruptibly#call}) nor the pauses: an interrupt status would make every pause return at once and
     * the retries spin. It is set aside and kept for the caller.
     */
    private Reached reachListener(InetSocketAddress address) throws IOException {
        return Uninterruptibly.call(() -> reachListenerUninterrupted(address));
    }

    /** {@link #reachListener}, run with the caller's interrupt status set aside. */
    private Reached reachListenerUninterrupted(InetSocketAddress address) throws IOException {
        long deadline = System.nanoTime() + CONNECT_WAIT_NANOS;
        long pause = 20_000;
        while (true) {
            Path stale = null;
            Path full = null;
            String other = null;
            for (Path candidate : fabric.rendezvousCandidates(address)) {
                if (!Files.exists(candidate)) {
                    continue;
                }
                SocketChannel attempt = SocketChannel.open(StandardProtocolFamily.UNIX);
                try {
                    attempt.configureBlocking(false);
                    if (attempt.connect(UnixDomainSocketAddress.of(candidate)) || attempt.finishConnect()) {
                        return new Reached(attempt, null);
                    }
                    // A UNIX stream connect never stays in progress on Linux; a kernel that does is a full queue.
                    full = candidate;
                    attempt.close();
                } catch (ConnectException e) {
                    // ECONNREFUSED: the file is a socket no process listens on.
                    attempt.close();
                    stale = candidate;
                } catch (SocketException e) {
                    attempt.close();
                    if (isWouldBlock(e)) {
                        full = candidate;
                    } else if (Files.exists(candidate)) {
                        other = "cannot reach the rendezvous socket " + candidate + ": " + e.getMessage();
                    }
                } catch (IOException | RuntimeException e) {
                    attempt.close();
                    throw e;
                }
            }
            if (full != null && System.nanoTime() - deadline < 0) {
                // An interrupt that arrived meanwhile would end every pause at once: set aside for the pause.
                boolean interrupted = Thread.interrupted();
                LockSupport.parkNanos(pause);
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
                pause = Math.min(pause * 2, 10_000_000);
                continue;
            }
            String why;
            if (full != null) {
                why = "connection refused: the listener at " + address + " on the shm fabric is alive but accepted"
                    + " no connection for " + TimeUnit.NANOSECONDS.toMillis(CONNECT_WAIT_NANOS) + " ms (its"
                    + " rendezvous socket " + full + " stayed full: the listening process is overloaded or stopped)";
            } else if (other != null) {
                why = "connection refused: no listener at " + address + " on the shm fabric: " + other;
            } else if (stale != null) {
                why = "connection refused: no live listener at " + address + " on the shm fabric (no process"
                    + " listens on the rendezvous socket " + stale + ": it was left by a process that is gone)";
            } else {
                why = "connection refused: no listener at " + address + " on the shm fabric (no rendezvous socket "
                    + fabric.rendezvousPath(address) + ")";
                String tcp = KernelListeners.tcpListenerHint(address);
                if (tcp != null) {
                    why += "; " + tcp;
                }
            }
            return new Reached(null, why);
        }
    }

    /** Whether a failed non-blocking connect met a full listen queue (EAGAIN), which is worth trying again. */
    private static boolean isWouldBlock(SocketException e) {
        String m = e.getMessage();
        return m != null && (m.contains("temporarily unavailable") || m.contains("EAGAIN")
            || m.contains("would block"));
    }

    private ByteBuffer requestBody(InetSocketAddress target, ShmQueuePair q, ByteBuffer data) {
        ByteBuffer b = ByteBuffer.allocate(1024);
        b.putInt(MAGIC).putInt(VERSION);
        ShmLink.putString(b, fabric.bootId);
        b.putLong(fabric.dirDevice).putLong(fabric.dirInode).putInt(fabric.uid);
        b.putLong(fabric.pid).putLong(fabric.nonce).putInt(fabric.directoryFd()).putLong(fabric.directoryInode());
        b.putInt(q.recvCapacity);
        ShmLink.putString(b, local.getAddress().getHostAddress());
        b.putInt(local.getPort());
        ShmLink.putString(b, target.getAddress().getHostAddress());
        b.putInt(target.getPort());
        ShmLink.putBytes(b, data);
        return b.flip();
    }

    private static ByteBuffer rejectBody(String reason, ByteBuffer data) {
        ByteBuffer b = ByteBuffer.allocate(600);
        ShmLink.putString(b, reason.length() > 500 ? reason.substring(0, 500) : reason);
        ShmLink.putBytes(b, data);
        return b.flip();
    }

    /** Null when a peer with these host facts shares this host and shm directory, else the reason. */
    private String hostMismatch(String bootId, long dev, long ino) {
        return hostMismatch(fabric.bootId, fabric.dirDevice, fabric.dirInode, fabric.dir, bootId, dev, ino);
    }

    /**
     * Null when a peer reporting {@code bootId}, {@code dev} and {@code ino} runs on this kernel and uses this shm
     * directory, else the reason naming what differs.
     */
    static String hostMismatch(String ourBootId, long ourDev, long ourIno, Path dir, String bootId, long dev,
                               long ino) {
        if (!bootId.equals(ourBootId)) {
            return "the peer is not on this host: its kernel boot id " + bootId + " differs from this host's "
                + ourBootId + " (the shm fabric connects processes of one running kernel)";
        }
        if (dev != ourDev || ino != ourIno) {
            return "the peer uses another shm directory (device " + dev + " inode " + ino + "; here " + dir
                + " is device " + ourDev + " inode " + ourIno + "): both ends must use the same rdmanio.shm.dir";
        }
        return null;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Messages (watcher thread).

    @Override
    public void message(ShmLink from, byte type, ByteBuffer body) throws IOException {
        switch (type) {
            case ShmLink.REQUEST: onRequest(from, body); break;
            case ShmLink.ACCEPT: onAccept(body); break;
            case ShmLink.REJECT: onReject(body); break;
            case ShmLink.READY: onReady(); break;
            case ShmLink.DISCONNECT: onDisconnect(body); break;
            case ShmLink.UP: onUp(); break;
            default: throw new IOException("unknown message type " + type);
        }
    }

    @Override
    public void doorbell() {
        ShmQueuePair q = qp;
        if (q != null) {
            q.rung();
        }
    }

    /**
     * Listener: a request arrived on an accepted socket. A request that cannot be read (cut short, an address that
     * is not an IP literal, a port out of range, another listener's address) is refused with the reason, as is one
     * of another protocol; the peer's addresses are never looked up by name (this is the watcher thread).
     */
    private void onRequest(ShmLink from, ByteBuffer b) {
        boolean answered;
        synchronized (this) {
            answered = listener != null;
        }
        if (answered) {
            // A second REQUEST on a connection whose first is being answered: that connection fails, alone.
            String why = "connection refused: a second request on one connection";
            LOG.log(System.Logger.Level.DEBUG, why + " from " + remote);
            from.trySend(ShmLink.REJECT, rejectBody(why, EMPTY));
            endOfFile(from, BAD_MESSAGE + "a second request on one connection");
            return;
        }
        String refusal = null;
        ShmCmId child = null;
        ByteBuffer data = EMPTY;
        try {
            int magic = b.getInt();
            int version = magic == MAGIC ? b.getInt() : 0;
            if (magic != MAGIC) {
                refusal = "connection refused: not a request of the shm fabric (magic 0x" + Integer.toHexString(magic)
                    + ", expected 0x" + Integer.toHexString(MAGIC) + ")";
            } else if (version != VERSION) {
                refusal = "connection refused: the peer speaks shm protocol version " + version + ", this side "
                    + VERSION;
            }
            if (refusal == null) {
                Request r = parseRequest(b);
                child = r.child;
                refusal = r.refusal;
                data = ShmLink.getBytes(b);
            }
        } catch (RuntimeException e) {
            // Cut short (underflow, a length past the end), an address that is no IP literal, a port out of range.
            refusal = "connection refused: a malformed request (" + e + ")";
            child = null;
        }
        if (refusal != null) {
            LOG.log(System.Logger.Level.DEBUG, "refused a request at " + local + ": " + refusal);
        }
        requestRead(from, child, data, refusal);
    }

    /** A request read: the child id it describes, and why it is refused (null: it is not). */
    private record Request(ShmCmId child, String refusal) {
    }

    /** Reads a request after its magic and version. Throws on one cut short or an address that is no IP literal. */
    private Request parseRequest(ByteBuffer b) {
        String bootId = ShmLink.getString(b);
        long dev = b.getLong();
        long ino = b.getLong();
        int peerUid = b.getInt();
        String refusal = hostMismatch(bootId, dev, ino);
        if (refusal != null) {
            refusal = "connection refused: " + refusal;
        } else if (peerUid != fabric.uid) {
            refusal = userRefusal(fabric.uid, fabric.userName, Integer.toString(peerUid));
        }
        ShmCmId child = new ShmCmId(fabric, channel);
        child.peerPid = b.getLong();
        child.peerNonce = b.getLong();
        child.peerDirFd = b.getInt();
        child.peerDirInode = b.getLong();
        child.peerCapacity = b.getInt();
        String srcHost = ShmLink.getString(b);
        int srcPort = b.getInt();
        String dstHost = ShmLink.getString(b);
        int dstPort = b.getInt();
        child.remote = new InetSocketAddress(literal(srcHost), srcPort);
        child.local = new InetSocketAddress(literal(dstHost), dstPort);
        InetSocketAddress at = local;
        if (refusal == null && at != null && (dstPort != at.getPort()
            || !at.getAddress().isAnyLocalAddress() && !at.getAddress().equals(child.local.getAddress()))) {
            refusal = "connection refused: the request is for " + child.local + ", this listener is at " + at;
        }
        if (refusal == null && (child.peerCapacity < 1 || child.peerCapacity > ShmRingsDescriptor.MAX_CAPACITY
            || Integer.bitCount(child.peerCapacity) != 1)) {
            refusal = "connection refused: bad ring capacity " + child.peerCapacity + " in the request";
        }
        return new Request(child, refusal);
    }

    /**
     * The address an IP literal names, without a name lookup: a request names its addresses as literals, and
     * anything else is refused (a lookup would hold the watcher thread, which serves every connection).
     */
    static InetAddress literal(String host) {
        boolean v4 = host.matches("[0-9]{1,3}(\\.[0-9]{1,3}){3}");
        boolean v6 = !v4 && host.indexOf(':') >= 0 && host.matches("[0-9A-Fa-f:.]+(%[0-9A-Za-z_.-]+)?");
        if (!v4 && !v6) {
            throw new IllegalArgumentException("not an IP address literal: '" + host + "'");
        }
        try {
            return InetAddress.getByName(host);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException("not an IP address literal: '" + host + "'");
        }
    }

    /** Listener: the request read (or refused with {@code refusal}); answered through the engine or refused. */
    private void requestRead(ShmLink from, ShmCmId child, ByteBuffer data, String refusal) {
        synchronized (this) {
            unrequested.remove(from);
            if (refusal == null && state != LISTENING) {
                refusal = "connection refused: the listener at " + local + " is closed";
            }
            if (refusal == null && pending.size() >= backlog) {
                refusal = "connection refused: the backlog of " + backlog + " pending requests at " + local
                    + " is full";
            }
            if (refusal == null) {
                try {
                    fabric.opened(child);
                } catch (FabricException e) {
                    refusal = "connection refused: the listener's fabric is closed";
                }
            }
            if (refusal == null) {
                child.state = REQUESTED;
                child.listener = this;
                child.link = from;
                from.owner = child;
                pending.add(child);
            }
        }
        if (refusal != null) {
            from.trySend(ShmLink.REJECT, rejectBody(refusal, EMPTY));
            from.close();
            return;
        }
        channel.post(new CmEvent(CmEvent.Type.CONNECT_REQUEST, child, this, data, null));
    }

    /** Active side: the listener accepted; map the rings (their arena, once) and go. */
    private void onAccept(ByteBuffer b) {
        CmEvent event;
        ShmLink l;
        synchronized (this) {
            l = link;
            if (state != CONNECTING) {
                return;
            }
            ShmPeer peer = null;
            String failure;
            ByteBuffer data = EMPTY;
            long listenerPid = 0;
            try {
                String bootId = ShmLink.getString(b);
                long dev = b.getLong();
                long ino = b.getLong();
                failure = hostMismatch(bootId, dev, ino);
                long pid = b.getLong();
                listenerPid = pid;
                long nonce = b.getLong();
                int dirFd = b.getInt();
                long dirInode = b.getLong();
                int arenaFd = b.getInt();
                long arenaInode = b.getLong();
                int arenaLength = b.getInt();
                int ringOffset = b.getInt();
                long ringNonce = b.getLong();
                int cap0 = b.getInt();
                int cap1 = b.getInt();
                data = ShmLink.getBytes(b);
                if (failure == null && cap1 != qp.recvCapacity) {
                    failure = "the listener's rings have capacity " + cap1 + " for this side, expected "
                        + qp.recvCapacity;
                }
                int ringLength = failure == null ? ShmRingsDescriptor.fileLength(cap0, cap1) : 0;
                if (failure == null && (ringOffset < 0 || ringOffset % 4096 != 0 || arenaLength < ringLength
                    || ringOffset > arenaLength - ringLength)) {
                    failure = "the listener's ring cell at " + ringOffset + " (" + ringLength + " bytes) is not in"
                        + " its " + arenaLength + "-byte ring arena";
                }
                if (failure == null) {
                    peer = fabric.acquirePeer(pid, nonce, dirFd, dirInode);
                    ByteBuffer ring = peer.arena(arenaFd, arenaInode, arenaLength).slice(ringOffset, ringLength);
                    failure = ShmRingsDescriptor.checkHeader(ring, ringNonce, cap0, cap1);
                    if (failure == null) {
                        qp.attach(ring, ringNonce, 1, cap0, cap1, peer, l);
                        peer = null; // the queue pair holds it now
                        qp.ready();
                        l.send(ShmLink.READY, EMPTY);
                    }
                }
            } catch (IOException | RuntimeException e) {
                // A listener that died after accepting takes its descriptors with it: say so, not just the path.
                failure = listenerPid > 0 && ShmHost.isGone(listenerPid)
                    ? "the listener at " + remote + " went away before the connection was set up (its process "
                        + listenerPid + " is gone)"
                    : "cannot join the listener's rings: " + e;
            }
            if (peer != null) {
                fabric.releasePeer(peer);
            }
            if (failure == null) {
                state = CONNECTED;
                // Reported when the listener says UP: its side is established by then.
                establishing = new CmEvent(CmEvent.Type.ESTABLISHED, this, null, data, null);
                return;
            } else {
                state = REFUSED;
                refusal = "connection refused: " + failure;
                event = new CmEvent(CmEvent.Type.REJECTED, this, null, EMPTY, refusal);
                link = null;
            }
        }
        if (event.type() == CmEvent.Type.REJECTED) {
            l.close();
        }
        channel.post(event);
    }

    private void onReject(ByteBuffer b) {
        String reason = ShmLink.getString(b);
        ByteBuffer data = ShmLink.getBytes(b);
        ShmLink l;
        synchronized (this) {
            if (state != CONNECTING) {
                return;
            }
            state = REFUSED;
            refusal = reason;
            l = link;
            link = null;
        }
        if (l != null) {
            l.close();
        }
        channel.post(new CmEvent(CmEvent.Type.REJECTED, this, null, data, reason));
    }

    /**
     * Passive side: the peer mapped the rings; the connection is up. ESTABLISHED is posted before UP is sent, so
     * the connection is this side's to accept before the peer's connect completes.
     */
    private void onReady() {
        ShmLink l;
        synchronized (this) {
            if (state != ACCEPTING) {
                return;
            }
            qp.ready();
            state = CONNECTED;
            l = link;
        }
        // UP before this side is established: the application can accept and close the connection as soon as
        // ESTABLISHED is posted, and its DISCONNECT must follow UP on the link, so that the client's connect
        // succeeds and then meets the end of the connection, as over TCP, instead of being refused.
        if (l != null) {
            l.trySend(ShmLink.UP, EMPTY);
        }
        channel.post(new CmEvent(CmEvent.Type.ESTABLISHED, this, null, EMPTY, null));
    }

    /** Active side: the listener's side is established; so is this one (unless it failed meanwhile). */
    private void onUp() {
        CmEvent e;
        synchronized (this) {
            e = establishing;
            establishing = null;
            if (e == null || state != CONNECTED || reportedDisconnect) {
                return;
            }
        }
        channel.post(e);
    }

    private void onDisconnect(ByteBuffer b) {
        int code = b.get();
        String reason = ShmLink.getString(b);
        ShmQueuePair q;
        synchronized (this) {
            q = qp;
            if (state != CONNECTED && state != ACCEPTING && state != DISCONNECTED) {
                return;
            }
        }
        // A peer that failed the connection because it found the shared state broken says so: kept as a protocol
        // error here too, so both ends name what was found.
        q.fail(reason.startsWith(CmEvent.PROTOCOL_ERROR)
            ? CmEvent.PROTOCOL_ERROR + "the peer failed the connection: " + reason.substring(
                CmEvent.PROTOCOL_ERROR.length())
            : "the peer ended the connection: " + reason, code, true);
    }

    @Override
    public void endOfFile(ShmLink from, String cause) {
        ShmQueuePair q = null;
        CmEvent event = null;
        ShmCmId parent = null;
        synchronized (this) {
            if (from.owner != this) {
                return;
            }
            if (unrequested.remove(from)) {
                if (cause.startsWith(BAD_MESSAGE)) {
                    // A peer that sent something else than a request: told why, as a refused request is.
                    LOG.log(System.Logger.Level.DEBUG, "refused a connection at " + local + ": " + cause);
                    from.trySend(ShmLink.REJECT, rejectBody("connection refused: " + cause, EMPTY));
                }
                from.close();
                return;
            }
            if (link != from) {
                from.close();
                return;
            }
            switch (state) {
                case CONNECTING:
                    state = REFUSED;
                    refusal = "connection refused: the listener at " + remote + (cause.startsWith(BAD_MESSAGE)
                        ? " answered with a " + cause : " went away before answering");
                    event = new CmEvent(CmEvent.Type.REJECTED, this, null, EMPTY, refusal);
                    link = null;
                    break;
                case REQUESTED:
                    state = REFUSED;
                    refusal = "a request the connecting peer " + remote + " went away from";
                    parent = listener;
                    link = null;
                    break;
                case ACCEPTING:
                case CONNECTED:
                case DISCONNECTED:
                    q = qp;
                    break;
                default:
                    break;
            }
        }
        if (parent != null) {
            parent.requestDone(this);
        }
        if (q != null) {
            q.peerExited(cause);
        }
        from.close();
        if (event != null) {
            channel.post(event);
        }
    }

    private synchronized void requestDone(ShmCmId child) {
        pending.remove(child);
    }

    /**
     * Called by the queue pair when the connection fails (once per cause): tells the peer, reports DISCONNECTED
     * once, and closes the socket when both sides have said so.
     */
    void connectionFailed(String cause, int code, boolean fromPeer) {
        boolean send;
        boolean report;
        boolean closeLink;
        ShmLink l;
        synchronized (this) {
            l = link;
            send = l != null && !sentDisconnect;
            sentDisconnect |= send;
            receivedDisconnect |= fromPeer;
            report = !reportedDisconnect && (state == CONNECTED || state == ACCEPTING);
            if (report) {
                reportedDisconnect = true;
                state = DISCONNECTED;
            }
            closeLink = l != null && sentDisconnect && receivedDisconnect;
            if (closeLink) {
                link = null;
            }
        }
        if (send) {
            ByteBuffer b = ByteBuffer.allocate(600);
            b.put((byte) code);
            ShmLink.putString(b, cause.length() > 500 ? cause.substring(0, 500) : cause);
            l.trySend(ShmLink.DISCONNECT, b.flip());
        }
        if (closeLink) {
            l.close();
        }
        if (report) {
            channel.post(new CmEvent(CmEvent.Type.DISCONNECTED, this, null, EMPTY, cause));
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Passive side: accept and reject.

    @Override
    public void accept(ByteBuffer privateData) throws IOException {
        ByteBuffer data = copyPrivateData(privateData);
        synchronized (this) {
            ensureState(REQUESTED, "accept");
            ShmQueuePair q = qp;
            if (q == null) {
                throw new FabricException("accept needs a queue pair: call createQueuePair first");
            }
            if (q.state() != ShmQueuePair.STATE_INIT) {
                throw new FabricException("accept needs a fresh queue pair; " + q + " is in the error state");
            }
            ShmPeer peer = null;
            ShmRingArena.Cell cell = null;
            boolean limit = false;
            int cap0 = q.recvCapacity;
            int cap1 = peerCapacity;
            try {
                peer = fabric.acquirePeer(peerPid, peerNonce, peerDirFd, peerDirInode);
                try {
                    cell = peer.takeCell(fabric, ShmRingsDescriptor.fileLength(cap0, cap1));
                } catch (IOException | RuntimeException e) {
                    // This process's limit, not the peer's doing: the request stays open so that the caller can
                    // reject it with the reason.
                    limit = true;
                    throw ShmFabric.limitReached(e, "cannot create the ring arena of a connection from " + remote);
                }
                long ringNonce = RANDOM.nextLong();
                ShmRingsDescriptor.writeHeader(cell.rings, ringNonce, cap0, cap1);
                ShmRingArena arena = cell.arena;
                int offset = cell.offset();
                q.attach(cell.rings, ringNonce, 0, cap0, cap1, peer, link, cell);
                peer = null; // the queue pair holds the peer and the cell now
                cell = null;
                ByteBuffer b = ByteBuffer.allocate(512);
                ShmLink.putString(b, fabric.bootId);
                b.putLong(fabric.dirDevice).putLong(fabric.dirInode);
                b.putLong(fabric.pid).putLong(fabric.nonce).putInt(fabric.directoryFd())
                    .putLong(fabric.directoryInode());
                b.putInt(arena.file.fd).putLong(arena.file.inode).putInt(arena.file.buffer.capacity())
                    .putInt(offset).putLong(ringNonce).putInt(cap0).putInt(cap1);
                ShmLink.putBytes(b, data);
                link.send(ShmLink.ACCEPT, b.flip());
                state = ACCEPTING;
            } catch (IOException e) {
                if (limit) {
                    throw e;
                }
                state = REFUSED;
                refusal = "a request whose peer went away";
                if (link != null) {
                    link.close();
                    link = null;
                }
                throw new FabricException("accept failed: the connecting peer " + remote + " went away: "
                    + e.getMessage(), e);
            } finally {
                if (cell != null) {
                    peer.releaseCell(cell);
                }
                if (peer != null) {
                    fabric.releasePeer(peer);
                }
                if (!limit) {
                    listener.requestDone(this);
                }
            }
        }
    }

    @Override
    public void reject(ByteBuffer privateData) throws IOException {
        ByteBuffer data = copyPrivateData(privateData);
        ShmLink l;
        synchronized (this) {
            ensureState(REQUESTED, "reject");
            state = REFUSED;
            refusal = "a request that was rejected";
            l = link;
            link = null;
        }
        listener.requestDone(this);
        if (l != null) {
            l.trySend(ShmLink.REJECT, rejectBody("connection rejected by the listener at " + local, data));
            l.close();
        }
    }

    // ---------------------------------------------------------------------------------------------------------

    @Override
    public QueuePair createQueuePair(QueuePair.Config config) throws IOException {
        Objects.requireNonNull(config, "config");
        synchronized (this) {
            if (qp != null) {
                throw new FabricException("the id already has a queue pair");
            }
            if (state == LISTENING || state == CLOSED || state == CONNECTED || state == REFUSED
                || state == DISCONNECTED || state == ACCEPTING) {
                throw new FabricException("cannot create a queue pair on an id that is " + stateName());
            }
            ShmQueuePair q = new ShmQueuePair(fabric, this, config);
            q.sendIndex = q.sendCq.attach(q);
            try {
                q.recvIndex = q.recvCq == q.sendCq ? q.sendIndex : q.recvCq.attach(q);
            } catch (FabricException e) {
                q.sendCq.detach(q, q.sendIndex);
                throw e;
            }
            qp = q;
            return q;
        }
    }

    @Override
    public QueuePair queuePair() {
        return qp;
    }

    @Override
    public void disconnect() throws IOException {
        ShmQueuePair q = null;
        ShmLink abandoned = null;
        synchronized (this) {
            if (state == CONNECTED || state == ACCEPTING) {
                q = qp;
            } else if (state == CONNECTING) {
                state = REFUSED;
                refusal = "a connect that was abandoned";
                abandoned = link;
                link = null;
            }
        }
        if (q != null) {
            q.fail("disconnected", ShmQueuePair.CAUSE_NORMAL, false);
        }
        if (abandoned != null) {
            abandoned.close();
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    @Override
    public void close() {
        try {
            disconnect();
        } catch (IOException e) {
            // disconnect reports through events; nothing to add while closing
        }
        ShmLink l;
        ServerSocketChannel ss;
        Path path;
        long inode;
        List<ShmCmId> children;
        List<ShmLink> orphans;
        ShmCmId parent = null;
        SocketChannel holder;
        synchronized (this) {
            if (state == CLOSED) {
                return;
            }
            if (state == REQUESTED) {
                parent = listener;
            }
            state = CLOSED;
            holder = portHolder;
            portHolder = null;
            l = link;
            link = null;
            ss = server;
            server = null;
            path = socketPath;
            inode = socketInode;
            children = new ArrayList<>(pending);
            pending.clear();
            orphans = new ArrayList<>(unrequested);
            unrequested.clear();
            remote = null;
        }
        if (holder != null) {
            try {
                holder.close();
            } catch (IOException e) {
                // closing: the kernel releases the port with the descriptor
            }
        }
        if (parent != null) {
            parent.requestDone(this);
            if (l != null) {
                l.trySend(ShmLink.REJECT, rejectBody("connection refused: the request was dropped by the listener at "
                    + local, EMPTY));
            }
        }
        if (l != null) {
            l.close();
        }
        if (ss != null) {
            try {
                ss.close();
            } catch (IOException e) {
                // closing
            }
            // The socket is registered with the watcher: its descriptor (and so the kernel's listening socket) is
            // released when the watcher's selector deregisters it. Waited for (briefly), so that a bind of the
            // address right after this close, which looks at the sockets bound to the path, finds it gone.
            ShmWatcher w = fabric.startedWatcher();
            if (w != null && !w.inWatcher()) {
                w.awaitRound(TimeUnit.SECONDS.toNanos(1));
            }
            RendezvousFiles.remove(path, inode);
        }
        for (ShmCmId child : children) {
            child.refuseByListener("connection refused: the listener at " + local + " closed before accepting");
        }
        for (ShmLink orphan : orphans) {
            orphan.trySend(ShmLink.REJECT, rejectBody("connection refused: the listener at " + local + " closed",
                EMPTY));
            orphan.close();
        }
        ShmQueuePair q = qp;
        if (q != null) {
            q.destroy();
        }
        fabric.closed(this);
    }

    /** A pending request whose listener closed: the peer is refused. */
    private void refuseByListener(String reason) {
        ShmLink l;
        synchronized (this) {
            if (state != REQUESTED) {
                return;
            }
            state = REFUSED;
            refusal = "a request the listener closed before accepting";
            l = link;
            link = null;
        }
        if (l != null) {
            l.trySend(ShmLink.REJECT, rejectBody(reason, EMPTY));
            l.close();
        }
    }

    private void ensureState(int expected, String operation) throws FabricException {
        if (state != expected) {
            throw new FabricException(operation + " refused: the id is " + stateName());
        }
    }

    private String stateName() {
        switch (state) {
            case IDLE: return "idle";
            case BOUND: return "bound to " + local;
            case LISTENING: return "listening on " + local;
            case CONNECTING: return "connecting to " + remote;
            case REQUESTED: return "a connect request from " + remote;
            case ACCEPTING: return "accepting a connection from " + remote;
            case CONNECTED: return "connected to " + remote;
            case DISCONNECTED: return "disconnected from " + remote;
            case REFUSED: return refusal;
            case CLOSED: return "closed";
            default: return "in state " + state;
        }
    }

    /** A read-only copy of {@code data} (position to limit), checked against {@link #MAX_PRIVATE_DATA}. */
    static ByteBuffer copyPrivateData(ByteBuffer data) {
        if (data == null || !data.hasRemaining()) {
            return EMPTY;
        }
        if (data.remaining() > MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("private data of " + data.remaining() + " bytes exceeds the limit of "
                + MAX_PRIVATE_DATA + " bytes of a connection-manager message");
        }
        ByteBuffer copy = ByteBuffer.allocate(data.remaining());
        copy.put(data.duplicate()).flip();
        return copy.asReadOnlyBuffer();
    }

    @Override
    public synchronized String toString() {
        return "shm id (" + stateName() + ")";
    }
}
