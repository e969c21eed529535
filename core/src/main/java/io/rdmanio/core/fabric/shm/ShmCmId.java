package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
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
 *                       <--------------- accept(): creates and maps the ring file, publishes its receives: ACCEPT
 *   maps the ring file, publishes its receives, ESTABLISHED
 *              READY    ---------------> closes the ring file's descriptor; ESTABLISHED
 *                       <--------------- or reject(): REJECT (private data)
 *   either side: DISCONNECT (cause)  <-> the other answers DISCONNECT; the socket closes after both
 * }</pre>
 *
 * <p>Thread-safe: state changes happen under this id's monitor, which is taken before its queue pair's lock and
 * never held while an event is posted or a notifier runs. Ids created for incoming requests deliver their events
 * on the listener's channel, as rdma_cm does.
 */
final class ShmCmId implements CmId, ShmLink.Receiver {

    static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();
    static final int MAGIC = 0x53484d43; // "SHMC"
    static final int VERSION = 1;

    private static final int IDLE = 0;
    private static final int BOUND = 1;
    private static final int LISTENING = 2;
    private static final int CONNECTING = 3;
    private static final int REQUESTED = 4;
    /** Passive side: accepted, waiting for the peer to map the ring file. */
    private static final int ACCEPTING = 5;
    private static final int CONNECTED = 6;
    /** The connection failed or was disconnected. */
    private static final int DISCONNECTED = 7;
    private static final int REFUSED = 8;
    private static final int CLOSED = 9;

    private static final int DEFAULT_BACKLOG = 50;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final InetAddress LOCALHOST = InetAddress.getLoopbackAddress();

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
    private final List<ShmCmId> pending = new ArrayList<>();
    private final List<ShmLink> unrequested = new ArrayList<>();
    /** Passive side: the listener, and the peer as its request described it. */
    private ShmCmId listener;
    private long peerPid;
    private long peerNonce;
    private int peerDirFd;
    private long peerDirInode;
    private int peerCapacity;
    /** Passive side: the ring file, open until the peer has mapped it. */
    private ShmFile ringFile;
    private boolean sentDisconnect;
    private boolean receivedDisconnect;
    private boolean reportedDisconnect;

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
                ss.bind(UnixDomainSocketAddress.of(path), DEFAULT_BACKLOG);
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
    }

    /** Serializes stale-socket replacement among the threads of this JVM (the file lock covers processes). */
    private static final Object REPLACE_LOCK = new Object();

    /**
     * Binds {@code ss} to {@code path}, which exists: a live listener there makes it a {@link BindException}; a
     * stale one (left by a dead process) is removed first. Check, removal and bind happen under a lock on
     * {@code DIR/.bind.lock}, so two processes replacing the same stale socket cannot remove each other's.
     */
    private void replaceStaleSocket(ServerSocketChannel ss, Path path, InetSocketAddress address) throws IOException {
        synchronized (REPLACE_LOCK) {
            // The lock file's channel must survive the caller's interrupt; an attempt it cut short bound nothing.
            Uninterruptibly.call(() -> replaceStaleSocketLocked(ss, path, address));
        }
    }

    private Void replaceStaleSocketLocked(ServerSocketChannel ss, Path path, InetSocketAddress address)
            throws IOException {
        try (FileChannel lockFile = FileChannel.open(fabric.dir.resolve(".bind.lock"),
                 Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE),
                 PosixFilePermissions.asFileAttribute(ShmFile.OWNER_ONLY));
             FileLock held = lockFile.lock()) {
            if (isLive(path)) {
                throw new BindException("address already in use: " + address + " is served by a live shm"
                    + " listener (rendezvous socket " + path + ")");
            }
            Files.deleteIfExists(path);
            try {
                ss.bind(UnixDomainSocketAddress.of(path), DEFAULT_BACKLOG);
            } catch (BindException again) {
                throw new BindException("address already in use: " + address + " (rendezvous socket " + path
                    + " was bound by another process meanwhile)");
            }
        }
        return null;
    }

    /** Whether a process accepts connections on the socket file {@code path}; a stale file refuses them. */
    private static boolean isLive(Path path) {
        try {
            return connectRendezvous(path, false) != null;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * A connected socket to the rendezvous socket {@code path} (a blocking connect, which a caller's interrupt must
     * not cut short: it would close the socket and fail a connect the interrupt was not meant for), or
     * {@code null} when nothing accepts there. Closed at once when {@code keep} is false.
     */
    private static SocketChannel connectRendezvous(Path path, boolean keep) throws IOException {
        return Uninterruptibly.call(() -> {
            SocketChannel attempt = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                attempt.connect(UnixDomainSocketAddress.of(path));
            } catch (SocketException e) {
                attempt.close();
                return null;
            } catch (IOException | RuntimeException e) {
                attempt.close();
                throw e;
            }
            if (!keep) {
                attempt.close();
            }
            return attempt;
        });
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
        try {
            ServerSocketChannel ss;
            synchronized (this) {
                ss = server;
            }
            if (ss == null) {
                return;
            }
            ch = ss.accept();
            if (ch == null) {
                return;
            }
            ch.configureBlocking(false);
        } catch (IOException e) {
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
        if (peerUser.equals(ourName)) {
            return null;
        }
        int peerUid = ShmHost.uidOfUserName(peerUser);
        return "connection refused: the connecting process runs as user " + peerUser + " (uid " + peerUid
            + "), not as this process's user " + ourName + " (uid " + ourUid + "); the shm fabric connects"
            + " processes of one user only";
    }

    private void registerLink(ShmLink l) {
        try {
            fabric.watcher().register(l.channel, SelectionKey.OP_READ, key -> {
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
    public void connect(InetSocketAddress address, ByteBuffer privateData) throws IOException {
        Objects.requireNonNull(address, "address");
        ByteBuffer data = copyPrivateData(privateData);
        CmEvent event = null;
        ShmLink l = null;
        synchronized (this) {
            if (state != IDLE && state != BOUND) {
                throw new FabricException("connect refused: the id is " + stateName());
            }
            ShmQueuePair q = qp;
            if (q == null || q.state() != ShmQueuePair.STATE_INIT) {
                throw new FabricException("connect needs a fresh queue pair: call createQueuePair first");
            }
            remote = address;
            if (address.isUnresolved()) {
                state = REFUSED;
                refusal = "unreachable";
                event = new CmEvent(CmEvent.Type.UNREACHABLE, this, null, EMPTY,
                    "cannot resolve " + address.getHostString() + " on the shm fabric");
            } else {
                if (local == null) {
                    local = new InetSocketAddress(LOCALHOST, ThreadLocalRandom.current().nextInt(32768, 61000));
                }
                SocketChannel ch = null;
                boolean anyFile = false;
                for (Path candidate : fabric.rendezvousCandidates(address)) {
                    if (!Files.exists(candidate)) {
                        continue;
                    }
                    anyFile = true;
                    ch = connectRendezvous(candidate, true);
                    if (ch != null) {
                        break;
                    }
                }
                if (ch == null) {
                    String why = anyFile
                        ? "connection refused: no live listener at " + address + " on the shm fabric (the"
                            + " rendezvous socket in " + fabric.dir + " was left by a process that is gone)"
                        : "connection refused: no listener at " + address + " on the shm fabric (no rendezvous"
                            + " socket " + fabric.rendezvousPath(address) + ")";
                    state = REFUSED;
                    refusal = why;
                    event = new CmEvent(CmEvent.Type.REJECTED, this, null, EMPTY, why);
                } else {
                    try {
                        ch.configureBlocking(false);
                        l = new ShmLink(ch, this);
                        link = l;
                        state = CONNECTING;
                        l.send(ShmLink.REQUEST, requestBody(address, q, data));
                    } catch (IOException e) {
                        if (l == null) {
                            ch.close();
                            link = null;
                            state = REFUSED;
                            refusal = "connection refused: the listener at " + address + " went away: "
                                + e.getMessage();
                            event = new CmEvent(CmEvent.Type.REJECTED, this, null, EMPTY, refusal);
                        }
                        // Else the listener may have refused this process at once (another user, say) and closed
                        // before the request was written: its REJECT is still in the socket. The watcher reads
                        // it, or the end of file, so the refusal keeps its reason.
                    }
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

    /** Listener: a request arrived on an accepted socket. */
    private void onRequest(ShmLink from, ByteBuffer b) {
        String refusal = null;
        if (b.getInt() != MAGIC || b.getInt() != VERSION) {
            refusal = "connection refused: the peer speaks another shm protocol version (expected " + VERSION + ")";
        }
        ShmCmId child = null;
        ByteBuffer data = EMPTY;
        if (refusal == null) {
            String bootId = ShmLink.getString(b);
            long dev = b.getLong();
            long ino = b.getLong();
            int peerUid = b.getInt();
            refusal = hostMismatch(bootId, dev, ino);
            if (refusal != null) {
                refusal = "connection refused: " + refusal;
            } else if (peerUid != fabric.uid) {
                refusal = userRefusal(fabric.uid, fabric.userName, Integer.toString(peerUid));
            }
            child = new ShmCmId(fabric, channel);
            child.peerPid = b.getLong();
            child.peerNonce = b.getLong();
            child.peerDirFd = b.getInt();
            child.peerDirInode = b.getLong();
            child.peerCapacity = b.getInt();
            String srcHost = ShmLink.getString(b);
            int srcPort = b.getInt();
            String dstHost = ShmLink.getString(b);
            int dstPort = b.getInt();
            data = ShmLink.getBytes(b);
            child.remote = new InetSocketAddress(srcHost, srcPort);
            child.local = new InetSocketAddress(dstHost, dstPort);
            if (child.peerCapacity < 1 || child.peerCapacity > ShmRingsDescriptor.MAX_CAPACITY
                || Integer.bitCount(child.peerCapacity) != 1) {
                refusal = "connection refused: bad ring capacity " + child.peerCapacity + " in the request";
            }
        }
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

    /** Active side: the listener accepted; map the ring file and go. */
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
            try {
                String bootId = ShmLink.getString(b);
                long dev = b.getLong();
                long ino = b.getLong();
                failure = hostMismatch(bootId, dev, ino);
                long pid = b.getLong();
                long nonce = b.getLong();
                int dirFd = b.getInt();
                long dirInode = b.getLong();
                int ringFd = b.getInt();
                long ringInode = b.getLong();
                long ringNonce = b.getLong();
                int cap0 = b.getInt();
                int cap1 = b.getInt();
                data = ShmLink.getBytes(b);
                if (failure == null && cap1 != qp.recvCapacity) {
                    failure = "the listener's ring file has capacity " + cap1 + " for this side, expected "
                        + qp.recvCapacity;
                }
                if (failure == null) {
                    peer = fabric.acquirePeer(pid, nonce, dirFd, dirInode);
                    MappedByteBuffer ring = ShmFile.mapPeer(pid, ringFd, ringInode,
                        ShmRingsDescriptor.fileLength(cap0, cap1));
                    failure = ShmRingsDescriptor.checkHeader(ring, ringNonce, cap0, cap1);
                    if (failure == null) {
                        qp.attach(ring, 1, cap0, cap1, peer, l);
                        peer = null; // the queue pair holds it now
                        qp.ready();
                        l.send(ShmLink.READY, EMPTY);
                    }
                }
            } catch (IOException | RuntimeException e) {
                failure = "cannot join the listener's ring file: " + e;
            }
            if (peer != null) {
                fabric.releasePeer(peer);
            }
            if (failure == null) {
                state = CONNECTED;
                event = new CmEvent(CmEvent.Type.ESTABLISHED, this, null, data, null);
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

    /** Passive side: the peer mapped the ring file; the connection is up. */
    private void onReady() {
        ShmFile ring;
        synchronized (this) {
            if (state != ACCEPTING) {
                return;
            }
            ring = ringFile;
            ringFile = null;
            qp.ready();
            state = CONNECTED;
        }
        if (ring != null) {
            ring.close();
        }
        channel.post(new CmEvent(CmEvent.Type.ESTABLISHED, this, null, EMPTY, null));
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
        q.fail("the peer ended the connection: " + reason, code, true);
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
                    refusal = "connection refused: the listener at " + remote + " went away before answering";
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
            q.fail(cause, ShmQueuePair.CAUSE_FAILURE, true);
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
        ShmFile ring;
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
            ring = ringFile;
            ringFile = null;
        }
        if (ring != null) {
            ring.close();
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
            ShmFile ring = null;
            try {
                peer = fabric.acquirePeer(peerPid, peerNonce, peerDirFd, peerDirInode);
                int cap0 = q.recvCapacity;
                int cap1 = peerCapacity;
                ring = ShmFile.create(fabric.newFilePath('q'), ShmRingsDescriptor.fileLength(cap0, cap1),
                    fabric.group);
                long ringNonce = RANDOM.nextLong();
                ShmRingsDescriptor.writeHeader(ring.buffer, ringNonce, cap0, cap1);
                q.attach(ring.buffer, 0, cap0, cap1, peer, link);
                peer = null;
                ByteBuffer b = ByteBuffer.allocate(512);
                ShmLink.putString(b, fabric.bootId);
                b.putLong(fabric.dirDevice).putLong(fabric.dirInode);
                b.putLong(fabric.pid).putLong(fabric.nonce).putInt(fabric.directoryFd())
                    .putLong(fabric.directoryInode());
                b.putInt(ring.fd).putLong(ring.inode).putLong(ringNonce).putInt(cap0).putInt(cap1);
                ShmLink.putBytes(b, data);
                link.send(ShmLink.ACCEPT, b.flip());
                ringFile = ring;
                ring = null;
                state = ACCEPTING;
            } catch (IOException e) {
                state = REFUSED;
                refusal = "a request whose peer went away";
                if (link != null) {
                    link.close();
                    link = null;
                }
                throw new FabricException("accept failed: the connecting peer " + remote + " went away: "
                    + e.getMessage(), e);
            } finally {
                if (peer != null) {
                    fabric.releasePeer(peer);
                }
                if (ring != null) {
                    ring.close();
                }
                listener.requestDone(this);
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
            q.sendCq.attach(q);
            if (q.recvCq != q.sendCq) {
                q.recvCq.attach(q);
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
        ShmFile ring;
        ShmCmId parent = null;
        synchronized (this) {
            if (state == CLOSED) {
                return;
            }
            if (state == REQUESTED) {
                parent = listener;
            }
            state = CLOSED;
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
            ring = ringFile;
            ringFile = null;
            remote = null;
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
            try {
                if (path != null && ShmHost.inode(path) == inode) {
                    Files.deleteIfExists(path);
                }
            } catch (IOException e) {
                // already gone, or replaced by another listener: not ours to remove
            }
        }
        for (ShmCmId child : children) {
            child.refuseByListener("connection refused: the listener at " + local + " closed before accepting");
        }
        for (ShmLink orphan : orphans) {
            orphan.trySend(ShmLink.REJECT, rejectBody("connection refused: the listener at " + local + " closed",
                EMPTY));
            orphan.close();
        }
        if (ring != null) {
            ring.close();
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
