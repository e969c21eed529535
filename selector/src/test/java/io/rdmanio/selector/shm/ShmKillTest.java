package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.selector.Tracked;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGKILL of the peer JVM (an unmodified NIO program on the shm fabric) at chosen and at random points, this JVM
 * being the survivor as client or as server. Checked each time: what the survivor's blocked read or select does
 * and how soon (printed; the assertion bound is generous), that an error surfaces on the next operation, that
 * another connection of the survivor carries on byte-exact, and that the shm directory holds nothing of the
 * dead connection.
 */
@Timeout(value = 120)
class ShmKillTest {

    /** The assertion bound for noticing a death; the target is a second, and each measurement is printed. */
    private static final long NOTICE_BOUND_MS = 10_000;

    @TempDir
    static Path tmp;

    private static ShmNio shm;
    private static Path rules;
    private static Random random;

    private final Tracked resources = new Tracked();
    /** A connection between two channels of this JVM, alive across each kill. */
    private SocketChannel[] bystander;

    @BeforeAll
    static void open() throws Exception {
        shm = ShmNio.open();
        rules = PeerJvm.rules(tmp);
        long seed = System.nanoTime();
        System.out.println("kill test seed " + seed);
        random = new Random(seed);
    }

    @AfterAll
    static void close() throws Exception {
        if (shm != null) {
            shm.close();
        }
    }

    @BeforeEach
    void openBystander() throws Exception {
        ServerSocketChannel s = track(shm.provider.openServerSocketChannel());
        s.bind(new InetSocketAddress("127.0.0.1", 0));
        SocketChannel c = track(shm.provider.openSocketChannel());
        assertTrue(c.connect(s.getLocalAddress()));
        bystander = new SocketChannel[] {c, track(s.accept())};
        assertBystanderCarriesOn();
    }

    @AfterEach
    void closeResources() {
        resources.closeAll();
    }

    private <T extends AutoCloseable> T track(T r) {
        return resources.track(r);
    }

    private void assertBystanderCarriesOn() throws IOException {
        byte[] data = NioPeerMain.pattern(100_000, random.nextInt());
        ByteBuffer out = ByteBuffer.wrap(data);
        ByteBuffer in = ByteBuffer.allocate(data.length);
        CompletableFuture<Void> w = CompletableFuture.runAsync(() -> {
            try {
                while (out.hasRemaining()) {
                    bystander[0].write(out);
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        while (in.hasRemaining()) {
            assertTrue(bystander[1].read(in) >= 0, "the bystander connection ended");
        }
        w.join();
        assertArrayEquals(data, in.array(), "another connection of the survivor carries on byte-exact");
    }

    /** After a death: the bystander works, nothing of the dead connection is left in the shm directory. */
    private void assertAftermath(PeerJvm dead) throws Exception {
        assertBystanderCarriesOn();
        List<String> before = shm.connectionEntries();
        // A file the peer died holding in the instant between creating and unlinking it is swept by the next
        // fabric that opens the directory.
        Fabrics.open("shm", Map.of("shm.dir", shm.dir.toString())).close();
        List<String> after = shm.connectionEntries();
        System.out.println("after the death of " + dead.pid() + ": connection files " + before + " -> " + after
            + "; all entries " + shm.entries());
        assertEquals(List.of(), after, "no file of the dead peer's connections is left");
    }

    /** Outcome of a read that must end after the peer's death: -1, or the IOException it threw. */
    private static String endOf(CompletableFuture<Integer> read) throws Exception {
        try {
            int n = read.get(NOTICE_BOUND_MS, TimeUnit.MILLISECONDS);
            assertEquals(-1, n, "a read ended by the peer's death returns end of stream (or throws)");
            return "end of stream";
        } catch (ExecutionException e) {
            assertTrue(e.getCause() instanceof IOException, "not an IOException: " + e.getCause());
            return e.getCause().toString();
        }
    }

    /** Writes (bounded) until a write throws; returns the error. Data written into a dead peer must fail. */
    private static IOException writeUntilError(SocketChannel ch) throws InterruptedException {
        ByteBuffer b = ByteBuffer.allocate(8192);
        long deadline = System.nanoTime() + ShmNio.TIMEOUT_NANOS;
        while (System.nanoTime() - deadline < 0) {
            try {
                if (ch.write(b.clear()) == 0) {
                    Thread.sleep(1);
                }
            } catch (IOException e) {
                return e;
            }
        }
        return fail("writes to a dead peer never failed");
    }

    private static CompletableFuture<Integer> readAsync(SocketChannel ch, Thread[] thread) {
        CompletableFuture<Integer> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(ch.read(ByteBuffer.allocate(100)));
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        }, "survivor-read");
        t.setDaemon(true);
        thread[0] = t;
        t.start();
        return f;
    }

    @Test
    void serverKilledWhileClientIsBlockedInRead() throws Exception {
        PeerJvm peer = PeerJvm.peer(shm.dir, rules);
        int port = Integer.parseInt(peer.ask("listen", "PORT ").substring(5));
        peer.send("accept");
        SocketChannel c = track(shm.provider.openSocketChannel());
        assertTrue(c.connect(new InetSocketAddress("127.0.0.1", port)));
        peer.expect("ACCEPTED");
        Thread[] reader = new Thread[1];
        CompletableFuture<Integer> read = readAsync(c, reader);
        ShmNio.awaitBlocked(reader[0], "read");
        long t0 = System.nanoTime();
        peer.kill();
        String outcome = endOf(read);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        System.out.println("blocked read after the server's SIGKILL: " + outcome + " after " + ms + " ms");
        assertTrue(ms < NOTICE_BOUND_MS);
        System.out.println("next write: " + writeUntilError(c));
        // A restarted server binds the dead one's address at once.
        ServerSocketChannel again = track(shm.provider.openServerSocketChannel());
        again.bind(new InetSocketAddress("127.0.0.1", port));
        SocketChannel c2 = track(shm.provider.openSocketChannel());
        assertTrue(c2.connect(new InetSocketAddress("127.0.0.1", port)));
        track(again.accept()).write(ByteBuffer.wrap(new byte[] {42}));
        ByteBuffer one = ByteBuffer.allocate(1);
        assertEquals(1, c2.read(one));
        assertEquals(42, one.get(0));
        assertAftermath(peer);
    }

    @Test
    void clientKilledWhileServerIsBlockedInSelect() throws Exception {
        PeerJvm peer = PeerJvm.peer(shm.dir, rules);
        ServerSocketChannel server = track(shm.provider.openServerSocketChannel());
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        peer.send("connect " + ((InetSocketAddress) server.getLocalAddress()).getPort());
        SocketChannel a = track(server.accept());
        peer.expect("CONNECTED");
        a.configureBlocking(false);
        Selector sel = track(shm.provider.openSelector());
        SelectionKey key = a.register(sel, SelectionKey.OP_READ);
        CompletableFuture<Integer> selected = new CompletableFuture<>();
        Thread selector = new Thread(() -> {
            try {
                selected.complete(sel.select());
            } catch (Throwable e) {
                selected.completeExceptionally(e);
            }
        }, "survivor-select");
        selector.setDaemon(true);
        selector.start();
        ShmNio.awaitBlocked(selector, "select");
        long t0 = System.nanoTime();
        peer.kill();
        int n = selected.get(NOTICE_BOUND_MS, TimeUnit.MILLISECONDS);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(1, n);
        assertTrue(sel.selectedKeys().contains(key) && key.isReadable(), "the channel is reported readable");
        String outcome;
        try {
            int r = a.read(ByteBuffer.allocate(10));
            assertEquals(-1, r, "the next read after the death is selected: end of stream or an error");
            outcome = "end of stream";
        } catch (IOException e) {
            outcome = e.toString();
        }
        System.out.println("blocked select after the client's SIGKILL: woke after " + ms + " ms, next read: "
            + outcome);
        assertTrue(ms < NOTICE_BOUND_MS);
        // Asked for writability, the dead connection is selected too, and the write then fails.
        key.interestOps(SelectionKey.OP_WRITE);
        sel.selectedKeys().clear();
        assertEquals(1, sel.select(ShmNio.TIMEOUT_SECONDS * 1000), "the dead connection is selected writable");
        System.out.println("next write: " + writeUntilError(a));
        assertAftermath(peer);
    }

    /** The stream the peer writes: {@code pattern(256 KiB, 3)} over and over. */
    private static final byte[] STREAM = NioPeerMain.pattern(256 * 1024, 3);

    @Test
    void killedMidStreamAtRandomPointsEitherSide() throws Exception {
        for (int round = 0; round < 4; round++) {
            boolean peerIsServer = round % 2 == 0;
            PeerJvm peer = PeerJvm.peer(shm.dir, rules);
            SocketChannel ch;
            if (peerIsServer) {
                int port = Integer.parseInt(peer.ask("listen", "PORT ").substring(5));
                peer.send("accept");
                ch = track(shm.provider.openSocketChannel());
                assertTrue(ch.connect(new InetSocketAddress("127.0.0.1", port)));
                peer.expect("ACCEPTED");
            } else {
                ServerSocketChannel server = track(shm.provider.openServerSocketChannel());
                server.bind(new InetSocketAddress("127.0.0.1", 0));
                peer.send("connect " + ((InetSocketAddress) server.getLocalAddress()).getPort());
                ch = track(server.accept());
                peer.expect("CONNECTED");
            }
            peer.ask("stream", "STREAMING");
            long killAt = 1 + random.nextInt(64 * 1024 * 1024);
            ByteBuffer b = ByteBuffer.allocate(64 * 1024);
            long pos = 0;
            long t0 = 0;
            String outcome = null;
            long deadline = System.nanoTime() + ShmNio.TIMEOUT_NANOS * 2;
            while (outcome == null) {
                assertTrue(System.nanoTime() - deadline < 0, "the stream neither ended nor failed in time");
                int n;
                try {
                    n = ch.read(b.clear());
                } catch (IOException e) {
                    outcome = e.toString();
                    break;
                }
                if (n < 0) {
                    outcome = "end of stream";
                    break;
                }
                for (int i = 0; i < n; i++, pos++) {
                    if (b.get(i) != STREAM[(int) (pos % STREAM.length)]) {
                        fail("byte " + pos + " of the stream differs");
                    }
                }
                if (t0 == 0 && pos >= killAt) {
                    t0 = System.nanoTime();
                    peer.kill();
                }
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            System.out.println("round " + round + " (peer " + (peerIsServer ? "server" : "client")
                + ") killed after " + killAt + " bytes: " + pos + " byte-exact bytes, then " + outcome + " after "
                + ms + " ms");
            assertTrue(t0 != 0, "the stream ended before the kill: " + outcome + "\n" + peer.output());
            assertTrue(ms < NOTICE_BOUND_MS);
            assertAftermath(peer);
        }
    }

    @Test
    void serverKilledAtARandomPointWhileClientsConnect() throws Exception {
        for (int round = 0; round < 2; round++) {
            PeerJvm peer = PeerJvm.peer(shm.dir, rules);
            int port = Integer.parseInt(peer.ask("listen", "PORT ").substring(5));
            peer.ask("serve", "SERVING");
            InetSocketAddress at = new InetSocketAddress("127.0.0.1", port);
            int killAfter = random.nextInt(40);
            int done = 0;
            String outcome = null;
            long deadline = System.nanoTime() + ShmNio.TIMEOUT_NANOS * 2;
            while (outcome == null) {
                assertTrue(System.nanoTime() - deadline < 0, "connects to a dead server never failed");
                if (done == killAfter) {
                    // Killed from another thread, so the death lands anywhere in the next connects.
                    CompletableFuture.runAsync(() -> {
                        try {
                            peer.kill();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
                }
                try (SocketChannel c = shm.provider.openSocketChannel()) {
                    try {
                        c.connect(at);
                    } catch (ConnectException e) {
                        outcome = e.toString();
                        break;
                    }
                    // Connected: the echo comes back, or the connection ends or fails; nothing hangs.
                    try {
                        c.write(ByteBuffer.wrap(new byte[] {5}));
                        ByteBuffer one = ByteBuffer.allocate(1);
                        int r = c.read(one);
                        assertTrue(r == -1 || r == 1 && one.get(0) == 5, "an echo or end of stream, got " + r);
                    } catch (IOException e) {
                        assertFalse(e instanceof java.nio.channels.ClosedChannelException, e.toString());
                    }
                }
                done++;
            }
            System.out.println("round " + round + ": killed after " + killAfter + " connects; " + done
                + " connects before the refusal: " + outcome);
            assertTrue(done >= killAfter);
            assertAftermath(peer);
        }
    }

    @Test
    void clientKilledAtARandomPointWhileConnecting() throws Exception {
        PeerJvm peer = PeerJvm.peer(shm.dir, rules);
        ServerSocketChannel server = track(shm.provider.openServerSocketChannel());
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        server.configureBlocking(false);
        Selector sel = track(shm.provider.openSelector());
        server.register(sel, SelectionKey.OP_ACCEPT);
        peer.ask("connectloop " + ((InetSocketAddress) server.getLocalAddress()).getPort(), "LOOPING");
        int killAfter = 1 + random.nextInt(40);
        int accepted = 0;
        boolean killed = false;
        long quietSince = 0;
        long deadline = System.nanoTime() + ShmNio.TIMEOUT_NANOS * 2;
        // Accept and drain until the peer is dead and nothing more arrives for a while.
        while (!killed || System.nanoTime() - quietSince < TimeUnit.SECONDS.toNanos(2)) {
            assertTrue(System.nanoTime() - deadline < 0, "the survivor's accept loop did not settle");
            sel.select(200);
            sel.selectedKeys().clear();
            SocketChannel a;
            while ((a = server.accept()) != null) {
                try (SocketChannel ch = a) {
                    CompletableFuture<Integer> r = new CompletableFuture<>();
                    try {
                        int n = ch.read(ByteBuffer.allocate(10));
                        r.complete(n == 1 ? readToEndOrError(ch) : n);
                    } catch (IOException e) {
                        r.completeExceptionally(e);
                    }
                    endOf(r);
                }
                accepted++;
                quietSince = System.nanoTime();
                if (!killed && accepted >= killAfter) {
                    peer.kill();
                    killed = true;
                    quietSince = System.nanoTime();
                }
            }
        }
        System.out.println("client killed after " + killAfter + " accepts; " + accepted + " accepted in all");
        assertAftermath(peer);
    }

    private static int readToEndOrError(SocketChannel ch) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(10);
        while (true) {
            int n = ch.read(b.clear());
            if (n < 0) {
                return n;
            }
        }
    }
}
