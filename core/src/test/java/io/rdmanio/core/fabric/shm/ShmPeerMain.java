package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.EngineConfig;
import io.rdmanio.core.engine.Engines;
import io.rdmanio.core.engine.Listener;
import io.rdmanio.core.engine.Readiness;
import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * The second process of the cross-process tests: it drives the fabric SPI directly and reports on stdout, one
 * line per fact. It exits when its stdin closes (the test is gone).
 *
 * <pre>
 *   server DIR            listen on 127.0.0.1, print "LISTENING port"; each request's private data picks what
 *                         to do: "echo" (accept, echo sends), "norecv" (accept with no receive
 *                         posted), "small" (16-byte receives), "reject" (reject with "rejected-by-peer"),
 *                         "standing" (publish a standing of 4242 once accepted, print "PUBLISHED"),
 *                         "standing-withdrawn" (publish it, then withdraw it), "standing-disconnect" (publish
 *                         it, then disconnect once established, print "DISCONNECTING")
 *   bind DIR PORT         listen on 127.0.0.1:PORT, print "LISTENING port", accept nothing
 *   client DIR PORT DATA  connect with DATA, print "EVENT type reason" of the outcome, then exit
 *   engine-echo DIR       the connection engine over shm: listen, print "LISTENING port", echo every byte of
 *                         each accepted connection until its end of stream, print "ECHOED n", close
 *   hostile-echo DIR ACTION SEED
 *                         as engine-echo, but once its first connection has echoed a first message and a line
 *                         came on stdin, it breaks what it shares with the other end and prints "DID ACTION":
 *                         "zero" or "garbage" (seeded)
 *                         over the connection's ring file, "region" truncates its own region files (not its
 *                         ready maps), "directory"
 *                         its region directory, "ring" the ring file (through /proc/self/map_files: root only)
 * </pre>
 */
public final class ShmPeerMain {

    static final int SLOT = 4096;
    static final int RECEIVES = 64;
    static final int SEND_AREA = RECEIVES * SLOT;
    static final int REGION = SEND_AREA + RECEIVES * SLOT;

    /** Set when the test writes a line to this process's standard input. */
    private static volatile boolean goAhead;

    private ShmPeerMain() {
    }

    public static void main(String[] args) throws Exception {
        Thread watchdog = new Thread(() -> {
            try {
                InputStream in = System.in;
                int b;
                while ((b = in.read()) >= 0) {
                    // keep reading until the parent closes our stdin; a line is a go-ahead (hostile-echo)
                    if (b == '\n') {
                        goAhead = true;
                    }
                }
            } catch (IOException e) {
                // parent gone
            }
            Runtime.getRuntime().halt(0);
        });
        watchdog.setDaemon(true);
        watchdog.start();
        Fabric fabric = Fabrics.open("shm", Map.of(ShmFabricProvider.DIR, args[1]));
        switch (args[0]) {
            case "server": server(fabric, 0, true); break;
            case "bind": server(fabric, Integer.parseInt(args[2]), false); break;
            case "client": client(fabric, Integer.parseInt(args[2]), args[3]); break;
            case "engine-echo": engineEcho(fabric, null, 0); break;
            case "hostile-echo": engineEcho(fabric, args[2], Long.parseLong(args[3])); break;
            default: throw new IllegalArgumentException(args[0]);
        }
    }

    static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static void client(Fabric fabric, int port, String data) throws IOException {
        EventChannel events = fabric.createEventChannel();
        CmId id = fabric.createId(events);
        CompletionQueue cq = fabric.createCompletionQueue(64);
        id.createQueuePair(new QueuePair.Config(cq, cq, 8, 8, 0));
        id.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port),
            ByteBuffer.wrap(data.getBytes(StandardCharsets.US_ASCII)));
        CmEvent event;
        while ((event = events.poll()) == null) {
            LockSupport.parkNanos(100_000);
        }
        say("EVENT " + event.type() + " " + event.reason());
        say("DONE");
        LockSupport.parkNanos(Long.MAX_VALUE);
    }

    private static void engineEcho(Fabric fabric, String misdeed, long seed) throws IOException {
        Engine engine = Engines.open(fabric, EngineConfig.DEFAULT);
        Listener listener = engine.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8,
            ConnectionOptions.DEFAULT);
        say("LISTENING " + listener.localAddress().getPort());
        ByteBuffer[] buf = {ByteBuffer.allocateDirect(1 << 16)};
        try {
            echoLoop(fabric, listener, buf, misdeed, seed);
        } catch (InternalError e) {
            // A peer that shrank its own files may fault on them itself; a hostile process would not crash over
            // it, so this one stays alive (its watcher still answers on the sockets) and lets the other end find
            // what it did.
            say("FAULT " + e.getMessage());
            while (true) {
                LockSupport.parkNanos(Long.MAX_VALUE);
            }
        }
    }

    private static void echoLoop(Fabric fabric, Listener listener, ByteBuffer[] buf, String misdeed,
                                 long seed) throws IOException {
        while (true) {
            listener.await(Readiness.ACCEPT, Long.MAX_VALUE);
            Connection c = listener.accept();
            if (c == null) {
                continue;
            }
            long echoed = 0;
            boolean eof = false;
            String pending = misdeed;
            misdeed = null;
            buf[0].clear();
            while (!eof || buf[0].position() > 0) {
                if (!eof && buf[0].hasRemaining()) {
                    long n = c.read(buf, 0, 1);
                    if (n < 0) {
                        eof = true;
                    }
                }
                buf[0].flip();
                echoed += c.write(buf, 0, 1);
                buf[0].compact();
                if (pending != null && echoed > 0 && buf[0].position() == 0 && goAhead) {
                    String refused = commit((ShmFabric) fabric, pending, seed);
                    say(refused != null ? "REFUSED " + pending + ": " + refused : "DID " + pending);
                    if (refused == null && (pending.equals("region") || pending.equals("directory")
                            || pending.equals("readymap"))) {
                        // Its own memory now faults wherever it is touched: a hostile peer leaves it alone, so
                        // that the other end's check, not this process's death, is what ends the connection.
                        while (true) {
                            LockSupport.park();
                        }
                    }
                    pending = null;
                }
                if (buf[0].position() > 0 || !eof) {
                    int want = (eof ? 0 : (buf[0].hasRemaining() ? Readiness.READ : 0))
                        | (buf[0].position() > 0 ? Readiness.WRITE : 0);
                    if (want != 0) {
                        c.await(want, pending != null ? 10_000_000L : 1_000_000_000L);
                    }
                }
            }
            c.shutdownOutput();
            say("ECHOED " + echoed);
            c.close();
        }
    }

    /**
     * Breaks what this process shares with its connection's other end (see the class comment); for the shrinking
     * misdeeds, the error that refused every truncation (sealed memory), else {@code null}.
     */
    private static String commit(ShmFabric fabric, String misdeed, long seed) throws IOException {
        ShmQueuePair[] live = fabric.liveQueuePairs();
        ByteBuffer ring = live[0].rings();
        switch (misdeed) {
            case "zero":
                for (int i = 0; i < ring.capacity(); i++) {
                    ring.put(i, (byte) 0);
                }
                break;
            case "garbage":
                java.util.Random random = new java.util.Random(seed);
                for (int i = 0; i < ring.capacity(); i++) {
                    ring.put(i, (byte) random.nextInt());
                }
                break;
            case "region":
            case "directory":
            case "readymap":
                // Again and again: this process's own fabric grows its files back when it finds them shrunk, and a
                // hostile peer would not.
                java.util.List<java.nio.file.Path> files = new java.util.ArrayList<>();
                if (misdeed.equals("readymap")) {
                    // Only where they are sealed: a shrunk ready map would kill this process at its next poll.
                    java.util.Set<Integer> maps = new java.util.HashSet<>();
                    for (ShmCompletionQueue cq : fabric.completionQueues()) {
                        maps.add(cq.mapRkey());
                    }
                    for (ShmMemoryRegion r : fabric.sharedRegions()) {
                        if (maps.contains(r.rkey())) {
                            files.add(ShmHost.descriptorPath(ShmHost.pid(), r.file.fd));
                        }
                    }
                } else if (misdeed.equals("region")) {
                    // Not its ready maps: this process updates them with atomic instructions whenever it polls or
                    // waits, and a fault there kills a JVM outright (SIGBUS in Unsafe compare-and-set, no
                    // InternalError), which would end the test before the other end could find anything.
                    java.util.Set<Integer> maps = new java.util.HashSet<>();
                    for (ShmCompletionQueue cq : fabric.completionQueues()) {
                        maps.add(cq.mapRkey());
                    }
                    for (ShmMemoryRegion r : fabric.sharedRegions()) {
                        if (!maps.contains(r.rkey())) {
                            files.add(ShmHost.descriptorPath(ShmHost.pid(), r.file.fd));
                        }
                    }
                } else {
                    files.add(ShmHost.descriptorPath(ShmHost.pid(), fabric.directoryFd()));
                }
                String refused = null;
                int done = 0;
                for (java.nio.file.Path f : files) {
                    try {
                        truncate(f);
                        done++;
                    } catch (IOException e) {
                        refused = files.size() + " file(s), " + f + ": " + e;
                    }
                }
                if (done == 0) {
                    if (refused == null) {
                        throw new IOException("nothing to shrink for " + misdeed);
                    }
                    return refused;
                }
                if (misdeed.equals("readymap")) {
                    throw new IOException("an unsealed ready map was shrunk: this process dies at its next poll");
                }
                Thread again = new Thread(() -> {
                    while (true) {
                        try {
                            for (java.nio.file.Path f : files) {
                                truncate(f);
                            }
                        } catch (IOException e) {
                            return;
                        }
                        LockSupport.parkNanos(20_000_000L);
                    }
                });
                again.setDaemon(true);
                again.start();
                break;
            case "ring":
                truncate(mappedFile("/q-"));
                break;
            default:
                throw new IllegalArgumentException(misdeed);
        }
        return null;
    }

    private static void truncate(java.nio.file.Path file) throws IOException {
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
            java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(0);
        }
    }

    /** The /proc/self/map_files entry of the mapping of a deleted shared file whose name contains {@code part}. */
    private static java.nio.file.Path mappedFile(String part) throws IOException {
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/maps"))) {
            if (line.contains(part) && line.contains("(deleted)")) {
                return java.nio.file.Path.of("/proc/self/map_files", line.substring(0, line.indexOf(' ')));
            }
        }
        throw new IOException("no mapping of a file named " + part);
    }

    /** One accepted connection of the server. */
    private static final class Conn {
        CmId id;
        QueuePair qp;
        MemoryRegion mr;
        String mode;
    }

    private static void server(Fabric fabric, int port, boolean accept) throws IOException {
        EventChannel events = fabric.createEventChannel();
        CmId listener = fabric.createId(events);
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        listener.listen(16);
        say("LISTENING " + listener.localAddress().getPort());
        CompletionQueue sendCq = fabric.createCompletionQueue(4096);
        CompletionQueue recvCq = fabric.createCompletionQueue(4096);
        Map<Integer, Conn> conns = new HashMap<>();
        Completions out = new Completions(64);
        while (true) {
            boolean idle = true;
            CmEvent event = events.poll();
            if (event != null) {
                idle = false;
                handle(fabric, event, accept, sendCq, recvCq, conns);
            }
            if (sendCq.poll(out) > 0) {
                idle = false;
                for (int i = 0; i < out.count(); i++) {
                    if (out.status[i] != Completions.SUCCESS) {
                        say("SEND " + out.status[i]);
                    }
                }
            }
            int n = recvCq.poll(out);
            for (int i = 0; i < n; i++) {
                idle = false;
                Conn c = conns.get(out.qpNum[i]);
                if (out.status[i] != Completions.SUCCESS) {
                    say("RECV " + out.status[i]);
                    continue;
                }
                if (c == null || c.qp.isError()) {
                    continue;
                }
                int slot = (int) out.wrId[i];
                int len = out.byteLen[i];
                ByteBuffer mem = c.mr.buffer();
                int from = slot * SLOT;
                // Answer from a separate area, so the receive slot can be posted again at once.
                int to = SEND_AREA + slot * SLOT;
                if (len > SLOT) {
                    say("TOO LONG " + len);
                    continue;
                }
                mem.put(to, mem, from, len);
                c.qp.postRecv(slot, c.mr, slot * SLOT, c.mode.equals("small") ? 16 : SLOT);
                c.qp.postSend(slot, c.mr, to, len, QueuePair.SIGNALED);
            }
            if (idle) {
                LockSupport.parkNanos(20_000);
            }
        }
    }

    private static void handle(Fabric fabric, CmEvent event, boolean accept, CompletionQueue sendCq,
                               CompletionQueue recvCq, Map<Integer, Conn> conns) throws IOException {
        switch (event.type()) {
            case CONNECT_REQUEST: {
                byte[] bytes = new byte[event.privateData().remaining()];
                event.privateData().duplicate().get(bytes);
                String mode = new String(bytes, StandardCharsets.US_ASCII);
                say("REQUEST " + mode);
                if (!accept || mode.equals("reject")) {
                    event.id().reject(ByteBuffer.wrap("rejected-by-peer".getBytes(StandardCharsets.US_ASCII)));
                    return;
                }
                Conn c = new Conn();
                c.id = event.id();
                c.mode = mode;
                c.mr = fabric.allocate(REGION, MemoryRegion.LOCAL_WRITE);
                c.qp = c.id.createQueuePair(new QueuePair.Config(sendCq, recvCq, RECEIVES, RECEIVES, 0));
                if (!mode.equals("norecv")) {
                    for (int i = 0; i < RECEIVES; i++) {
                        c.qp.postRecv(i, c.mr, i * SLOT, mode.equals("small") ? 16 : SLOT);
                    }
                }
                conns.put(c.qp.qpNum(), c);
                c.id.accept(null);
                if (mode.startsWith("standing")) {
                    c.qp.publishStanding(4242);
                    if (mode.equals("standing-withdrawn")) {
                        c.qp.publishStanding(-1);
                    }
                    say("PUBLISHED");
                }
                return;
            }
            case ESTABLISHED:
                say("ESTABLISHED");
                for (Conn c : conns.values()) {
                    if (c.id == event.id() && c.mode.equals("standing-disconnect")) {
                        c.id.disconnect();
                        say("DISCONNECTING");
                    }
                }
                return;
            case DISCONNECTED:
                // Completions published before the disconnect are still in the queue: report them before the id
                // (and its rings) is destroyed, whatever order this loop saw them in.
                Completions left = new Completions(64);
                for (int n = recvCq.poll(left); n > 0; n = recvCq.poll(left)) {
                    for (int i = 0; i < n; i++) {
                        if (left.status[i] != Completions.SUCCESS) {
                            say("RECV " + left.status[i]);
                        }
                    }
                }
                say("EVENT DISCONNECTED " + event.reason());
                if (fabric instanceof ShmFabric shm) {
                    say("RNR " + shm.receiverNotReadyCount());
                }
                for (Conn c : conns.values()) {
                    if (c.id == event.id()) {
                        conns.remove(c.qp.qpNum());
                        c.id.close();
                        c.mr.close();
                        break;
                    }
                }
                return;
            default:
                say("EVENT " + event.type() + " " + event.reason());
        }
    }
}
