package io.rdmanio.core.fabric.shm;

import static io.rdmanio.core.fabric.shm.ShmTestSupport.expect;
import static io.rdmanio.core.fabric.shm.ShmTestSupport.pollExactly;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The shm fabric between this JVM and a second one ({@link ShmPeerMain}). */
class ShmCrossProcessTest {

    private static final int DEPTH = 32;
    private static final int SLOT = ShmPeerMain.SLOT;

    private Path dir;
    private ShmFabric fabric;
    private EventChannel events;
    private CompletionQueue sendCq;
    private CompletionQueue recvCq;
    private MemoryRegion mr;

    @BeforeEach
    void open() throws IOException {
        dir = ShmTestSupport.newDirectory();
        fabric = ShmTestSupport.open(dir);
        events = fabric.createEventChannel();
        sendCq = fabric.createCompletionQueue(DEPTH * 2);
        recvCq = fabric.createCompletionQueue(DEPTH * 2);
        mr = fabric.allocate(DEPTH * SLOT * 2, MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_WRITE);
    }

    @AfterEach
    void close() throws IOException {
        fabric.close();
        ShmTestSupport.deleteDirectory(dir);
    }

    private static ByteBuffer ascii(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.US_ASCII));
    }

    private static int port(PeerProcess peer) throws InterruptedException {
        return Integer.parseInt(peer.expect("LISTENING ").substring("LISTENING ".length()));
    }

    private InetSocketAddress at(int port) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
    }

    /** Connects to the peer's server with {@code mode}, posting {@code DEPTH} receives first. */
    private CmId connect(int port, String mode, CmEvent.Type outcome) throws IOException {
        CmId id = fabric.createId(events);
        QueuePair qp = id.createQueuePair(new QueuePair.Config(sendCq, recvCq, DEPTH, DEPTH, 0));
        for (int i = 0; i < DEPTH; i++) {
            qp.postRecv(i, mr, i * SLOT, SLOT);
        }
        id.connect(at(port), ascii(mode));
        CmEvent event = expect(events, outcome);
        assertEquals(id, event.id());
        lastEvent = event;
        return id;
    }

    private CmEvent lastEvent;

    @Test
    void acceptedPeerEchoesSendsByteExact() throws Exception {
        try (PeerProcess peer = PeerProcess.start("server", dir.toString())) {
            CmId id = connect(port(peer), "echo", CmEvent.Type.ESTABLISHED);
            peer.expect("ESTABLISHED");
            QueuePair qp = id.queuePair();
            Random random = new Random(42);
            Completions out = new Completions(DEPTH);
            ByteBuffer mem = mr.buffer();
            int sendBase = DEPTH * SLOT;
            byte[] expected = new byte[SLOT];
            byte[] actual = new byte[SLOT];
            for (int round = 0; round < 400; round++) {
                int len = 1 + random.nextInt(SLOT);
                random.nextBytes(expected);
                mem.put(sendBase, expected, 0, len);
                qp.postSend(round, mr, sendBase, len, QueuePair.SIGNALED);
                pollExactly(sendCq, out, 1);
                assertEquals(Completions.SUCCESS, out.status[0], Completions.statusName(out.status[0]));
                pollExactly(recvCq, out, 1);
                assertEquals(Completions.SUCCESS, out.status[0], Completions.statusName(out.status[0]));
                assertEquals(Completions.OP_RECV, out.opcode[0]);
                assertEquals(len, out.byteLen[0]);
                int slot = (int) out.wrId[0];
                mem.get(slot * SLOT, actual, 0, len);
                assertArrayEquals(java.util.Arrays.copyOf(expected, len), java.util.Arrays.copyOf(actual, len),
                    "round " + round);
                qp.postRecv(slot, mr, slot * SLOT, SLOT);
            }
            id.disconnect();
            expect(events, CmEvent.Type.DISCONNECTED);
            peer.expect("EVENT DISCONNECTED");
            id.close();
        }
    }

    @Test
    void peerRejectsWithPrivateData() throws Exception {
        try (PeerProcess peer = PeerProcess.start("server", dir.toString())) {
            connect(port(peer), "reject", CmEvent.Type.REJECTED);
            byte[] data = new byte[lastEvent.privateData().remaining()];
            lastEvent.privateData().get(data);
            assertEquals("rejected-by-peer", new String(data, StandardCharsets.US_ASCII));
        }
    }

    @Test
    void peerConnectingWhereNoListenerIsGetsRejectedNamingTheAddress() throws Exception {
        try (PeerProcess peer = PeerProcess.start("client", dir.toString(), "7", "hello")) {
            String line = peer.expect("EVENT ");
            assertTrue(line.startsWith("EVENT REJECTED") && line.contains("/127.0.0.1:7"), line);
        }
    }

    @Test
    void peerIsAcceptedHereAndRefusedWhenRejected() throws Exception {
        CmId listener = fabric.createId(events);
        listener.bind(at(0));
        listener.listen(4);
        String port = Integer.toString(listener.localAddress().getPort());
        try (PeerProcess peer = PeerProcess.start("client", dir.toString(), port, "please")) {
            CmEvent request = expect(events, CmEvent.Type.CONNECT_REQUEST);
            assertEquals("please", StandardCharsets.US_ASCII.decode(request.privateData()).toString());
            request.id().reject(ascii("no"));
            String line = peer.expect("EVENT ");
            assertTrue(line.startsWith("EVENT REJECTED connection rejected by the listener"), line);
        }
        try (PeerProcess peer = PeerProcess.start("client", dir.toString(), port, "please")) {
            CmEvent request = expect(events, CmEvent.Type.CONNECT_REQUEST);
            CmId server = request.id();
            server.createQueuePair(new QueuePair.Config(sendCq, recvCq, DEPTH, DEPTH, 0));
            server.accept(null);
            assertTrue(peer.expect("EVENT ").startsWith("EVENT ESTABLISHED"));
            expect(events, CmEvent.Type.ESTABLISHED);
            peer.kill();
            CmEvent gone = expect(events, CmEvent.Type.DISCONNECTED);
            assertEquals(server, gone.id());
            server.close();
        }
        listener.close();
    }

    @Test
    void bindingAnAddressALivePeerServesFailsAndItsStaleSocketIsReplacedAfterItDies() throws Exception {
        int port;
        try (PeerProcess peer = PeerProcess.start("bind", dir.toString(), "0")) {
            port = port(peer);
            CmId id = fabric.createId(events);
            BindException e = assertThrows(BindException.class, () -> id.bind(at(port)));
            assertTrue(e.getMessage().contains("live"), e.getMessage());
            id.close();
            peer.kill();
        }
        assertTrue(Files.exists(fabric.rendezvousPath(at(port))), "a killed process leaves its socket file");
        // A connect to the stale socket is refused, naming the address.
        CmId client = connect(port, "echo", CmEvent.Type.REJECTED);
        assertTrue(lastEvent.reason().contains(at(port).toString()), lastEvent.reason());
        client.close();
        CmId again = fabric.createId(events);
        again.bind(at(port));
        again.listen(4);
        again.close();
    }

    @Test
    void everyStrictnessRuleHoldsAcrossProcesses() throws Exception {
        try (PeerProcess peer = PeerProcess.start("server", dir.toString())) {
            int port = port(peer);
            Completions out = new Completions(DEPTH);

            // Receiver not ready: the peer posted nothing.
            CmId a = connect(port, "norecv", CmEvent.Type.ESTABLISHED);
            a.queuePair().postSend(1, mr, 0, 8, 0);
            pollExactly(sendCq, out, 1);
            assertEquals(Completions.RNR_RETRY_EXC_ERR, out.status[0]);
            expect(events, CmEvent.Type.DISCONNECTED);
            assertTrue(peer.expect("EVENT DISCONNECTED").contains("receiver not ready"));
            assertEquals("RNR 1", peer.expect("RNR "));
            pollExactly(recvCq, out, DEPTH);
            a.close();

            // Larger than the receive: the peer posted 16-byte receives.
            CmId b = connect(port, "small", CmEvent.Type.ESTABLISHED);
            b.queuePair().postSend(2, mr, 0, 17, QueuePair.SIGNALED);
            pollExactly(sendCq, out, 1);
            assertEquals(Completions.REM_INV_REQ_ERR, out.status[0]);
            assertEquals("RECV " + Completions.LOC_LEN_ERR, peer.expect("RECV "));
            assertTrue(peer.expect("EVENT DISCONNECTED").contains("larger than the receive"));
            expect(events, CmEvent.Type.DISCONNECTED);
            pollExactly(recvCq, out, DEPTH);
            b.close();
        }
    }

    @Test
    void killedPeerIsNoticedAndEverythingIsFlushedAndFreed() throws Exception {
        Random random = new Random();
        int baselineFds = -1;
        for (int run = 0; run < 4; run++) {
            try (PeerProcess peer = PeerProcess.start("server", dir.toString())) {
                CmId id = connect(port(peer), "echo", CmEvent.Type.ESTABLISHED);
                peer.expect("ESTABLISHED");
                QueuePair qp = id.queuePair();
                Completions out = new Completions(DEPTH);
                int killAfter = random.nextInt(300);
                int sent = 0;
                int received = 0;
                int flushed = 0;
                boolean killed = false;
                long deadline = System.nanoTime() + ShmTestSupport.TIMEOUT_NANOS;
                CmEvent disconnected = null;
                while (true) {
                    if (System.nanoTime() - deadline > 0) {
                        fail("no DISCONNECTED after the peer was killed: event " + disconnected + ", sent " + sent
                            + ", received " + received + ", flushed " + flushed + ", posted " + postedReceives(qp)
                            + ", error " + qp.isError());
                    }
                    if (!killed && sent >= killAfter) {
                        peer.kill();
                        killed = true;
                    }
                    if (!qp.isError() && sent - received < DEPTH / 2) {
                        try {
                            qp.postSend(sent, mr, DEPTH * SLOT, 100, sent % 8 == 7 ? QueuePair.SIGNALED : 0);
                            sent++;
                        } catch (IOException e) {
                            // the connection failed meanwhile: the event follows
                        }
                    }
                    int n = recvCq.poll(out);
                    for (int i = 0; i < n; i++) {
                        if (out.status[i] == Completions.SUCCESS) {
                            received++;
                            if (!qp.isError()) {
                                qp.postRecv(out.wrId[i], mr, (int) out.wrId[i] * SLOT, SLOT);
                            }
                        } else {
                            assertEquals(Completions.WR_FLUSH_ERR, out.status[i]);
                            flushed++;
                        }
                    }
                    sendCq.poll(out);
                    if (disconnected == null) {
                        disconnected = events.poll();
                    }
                    if (disconnected != null && killed && received + flushed == postedReceives(qp)) {
                        break;
                    }
                    LockSupport.parkNanos(10_000);
                }
                assertTrue(killed);
                assertEquals(CmEvent.Type.DISCONNECTED, disconnected.type(), disconnected.toString());
                assertTrue(qp.isError());
                id.close();
            }
            // Only the dead peer's listener socket (until the next bind sweeps it) and the bind lock may remain:
            // no ring or region file has a name.
            try (Stream<Path> files = Files.list(dir)) {
                List<String> left = files.map(p -> p.getFileName().toString())
                    .filter(n -> !n.endsWith(".sock") && !n.equals(".bind.lock")).collect(Collectors.toList());
                assertEquals(List.of(), left);
            }
            // The first run starts the watcher thread (its selector's descriptors): count from after it.
            if (run == 0) {
                baselineFds = ShmTestSupport.openDescriptors();
            }
        }
        // The watcher closes a dead peer's socket just after it reports the death: wait for it, bounded.
        int after = ShmTestSupport.openDescriptors();
        long deadline = System.nanoTime() + ShmTestSupport.TIMEOUT_NANOS;
        while (after > baselineFds && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(1_000_000);
            after = ShmTestSupport.openDescriptors();
        }
        assertTrue(after <= baselineFds, "descriptors leaked: " + baselineFds + " after the first run, " + after
            + " after the last");
        assertEquals(0, fabric.peerCount());
    }

    /**
     * What a peer publishes of its standing is shown only once its process ended without a DISCONNECT: not while
     * it lives, not after an orderly disconnect, and not once it withdrew it.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"standing, 4242", "standing-withdrawn, -1", "standing-disconnect, -1"})
    void aDeadPeersLastStandingIsShownAfterItsDeathOnly(String mode, long expected) throws Exception {
        try (PeerProcess peer = PeerProcess.start("server", dir.toString())) {
            CmId id = connect(port(peer), mode, CmEvent.Type.ESTABLISHED);
            peer.expect("PUBLISHED");
            QueuePair qp = id.queuePair();
            if (mode.equals("standing-disconnect")) {
                peer.expect("DISCONNECTING");
            } else {
                assertEquals(-1, qp.peerStanding(), "nothing while the peer lives");
                peer.kill();
            }
            CmEvent event = ShmTestSupport.expect(events, CmEvent.Type.DISCONNECTED);
            assertEquals(id, event.id());
            assertEquals(expected, qp.peerStanding(), event.toString());
            id.close();
        }
    }

    @Test
    void peerKilledDuringSetupLeavesAConsistentOutcome() throws Exception {
        Random random = new Random();
        for (int run = 0; run < 4; run++) {
            try (PeerProcess peer = PeerProcess.start("server", dir.toString())) {
                int port = port(peer);
                CmId id = fabric.createId(events);
                QueuePair qp = id.createQueuePair(new QueuePair.Config(sendCq, recvCq, DEPTH, DEPTH, 0));
                for (int i = 0; i < DEPTH; i++) {
                    qp.postRecv(i, mr, i * SLOT, SLOT);
                }
                id.connect(at(port), ascii("echo"));
                // A kill point somewhere in the exchange: the request, the accept, or just after.
                LockSupport.parkNanos(random.nextInt(3_000_000));
                peer.kill();
                CmEvent first = ShmTestSupport.next(events);
                Completions out = new Completions(DEPTH);
                if (first.type() == CmEvent.Type.ESTABLISHED) {
                    CmEvent second = expect(events, CmEvent.Type.DISCONNECTED);
                    assertEquals(id, second.id());
                    // An established connection that fails flushes every posted receive.
                    pollExactly(recvCq, out, DEPTH);
                    for (int i = 0; i < DEPTH; i++) {
                        assertEquals(Completions.WR_FLUSH_ERR, out.status[i]);
                    }
                } else {
                    // A connect that never got through leaves the queue pair as it was (as rdma_cm does).
                    assertEquals(CmEvent.Type.REJECTED, first.type(), first.toString());
                    assertEquals(0, recvCq.poll(out));
                    assertTrue(first.reason().contains("went away") || first.reason().contains("no live listener"),
                        first.reason());
                }
                id.close();
            }
        }
        assertEquals(0, fabric.peerCount());
    }

    /** Receives posted on {@code qp} over its life: the test reposts each one it polls successfully. */
    private static long postedReceives(QueuePair qp) {
        return ((ShmQueuePair) qp).postedReceives();
    }

    @Test
    void peerOfAnotherUserCannotUseThisUsersDirectory() throws Exception {
        Path setpriv = Path.of("/usr/bin/setpriv");
        Assumptions.assumeTrue(ShmHost.uid() == 0 && Files.isExecutable(setpriv),
            "needs root and setpriv to run the peer as nobody; ShmInProcessTest checks the uid rule directly");
        CmId listener = fabric.createId(events);
        listener.bind(at(0));
        listener.listen(4);
        // The other user must be able to read the classes, wherever the checkout lives (a 0700 temporary
        // directory, say): they are copied into a directory readable by all.
        Path readable = Files.createTempDirectory("rdmanio-peer-classes");
        Files.setPosixFilePermissions(readable, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<String> entries = new java.util.ArrayList<>();
        for (String p : System.getProperty("java.class.path").split(":")) {
            if (p.endsWith("target/classes") || p.endsWith("target/test-classes")) {
                Path copy = readable.resolve(Integer.toString(entries.size()));
                copyReadable(Path.of(p), copy);
                entries.add(copy.toString());
            }
        }
        String classPath = String.join(":", entries);
        // Even opened to all, the directory is this user's: the other user's fabric refuses to use it (and so can
        // neither reach nor replace the listener's socket); the accepting side's SO_PEERCRED check stays behind it.
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        try (PeerProcess peer = PeerProcess.startAs(
            List.of(setpriv.toString(), "--reuid=65534", "--regid=65534", "--clear-groups"), classPath,
            "client", dir.toString(), Integer.toString(listener.localAddress().getPort()), "hi")) {
            String line = peer.expect("Exception");
            assertTrue(line.contains("the shm directory " + dir + " is owned by uid 0") && line.contains("0777"),
                line);
        } finally {
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
            ShmTestSupport.deleteDirectory(readable);
        }
        assertEquals(null, events.poll(), "a refused user never reaches the listener as a request");
        listener.close();
    }

    /** Copies a class directory so that every user can read it. */
    private static void copyReadable(Path from, Path to) throws IOException {
        try (Stream<Path> walk = Files.walk(from)) {
            for (Path src : (Iterable<Path>) walk::iterator) {
                Path dst = to.resolve(from.relativize(src).toString());
                if (Files.isDirectory(src)) {
                    Files.createDirectories(dst);
                    Files.setPosixFilePermissions(dst, PosixFilePermissions.fromString("rwxr-xr-x"));
                } else {
                    Files.copy(src, dst);
                    Files.setPosixFilePermissions(dst, PosixFilePermissions.fromString("rw-r--r--"));
                }
            }
        }
    }
}
