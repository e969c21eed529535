package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.selector.Tracked;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Resources and connect bursts, each scenario written once and run against the JDK's TCP and against rdmanio on
 * shm, with the same expected outcome. The peers are unmodified NIO programs ({@link NioPeerMain}) in other JVMs:
 * on TCP their rules keep every socket on the JDK's TCP, on shm every loopback socket is on the fabric in this
 * class's directory, which this JVM's provider shares.
 *
 * <ul>
 *   <li>200 connects from virtual threads at once to a live listener all succeed (a peer JVM of Java 21 or later;
 *       skipped without one);</li>
 *   <li>clients killed with SIGKILL during a connect burst leave the server at its baseline descriptor count;</li>
 *   <li>a reply written after the peer's orderly close (read to -1, then write once, then read -1) is silent, as
 *       on TCP, where the write is accepted and only the reset it provokes would fail a later one (the fabric-level
 *       race of such a send with the peer's close is {@code ShmSendRacingOrderlyDisconnectTest});</li>
 *   <li>the application's backlog is honoured: more connections than the engine's minimum accept queue wait for
 *       accept when the application asked for that many;</li>
 *   <li>(shm only, TCP has no files) a listener's rendezvous socket is gone after close, after a normal exit and
 *       after SIGTERM, and one left by a SIGKILL is removed by the next bind in the directory.</li>
 * </ul>
 */
@Timeout(value = 300)
class ShmResourcesParityTest {

    @TempDir
    static Path tmp;

    private static ShmNio shm;
    private static Path shmRules;
    private static Path tcpRules;

    private final Tracked resources = new Tracked();

    @BeforeAll
    static void open() throws Exception {
        shm = ShmNio.open();
        shmRules = PeerJvm.rules(tmp);
        tcpRules = tmp.resolve("all-on-tcp.rules");
        Files.writeString(tcpRules, "bind 127.0.0.1 * tcp\nconnect 127.0.0.1 * tcp\n");
    }

    @AfterAll
    static void close() throws Exception {
        if (shm != null) {
            shm.close();
        }
    }

    @AfterEach
    void closeResources() {
        resources.closeAll();
    }

    private <T extends AutoCloseable> T track(T r) {
        return resources.track(r);
    }

    /** This JVM's provider for {@code transport}: the JDK's own for TCP, rdmanio on the shared shm directory. */
    private static SelectorProvider provider(String transport) {
        return transport.equals("tcp") ? SelectorProvider.provider() : shm.provider;
    }

    private static Path rules(String transport) {
        return transport.equals("tcp") ? tcpRules : shmRules;
    }

    private PeerJvm peer(String transport) throws Exception {
        return track(PeerJvm.peer(shm.dir, rules(transport)));
    }

    /** Accepts on {@code server} until it closes; each connection echoes one byte, reads to its end and closes. */
    private ExecutorService echoServer(ServerSocketChannel server) {
        ExecutorService pool = Executors.newCachedThreadPool();
        track(pool::shutdownNow);
        pool.execute(() -> {
            while (server.isOpen()) {
                SocketChannel c;
                try {
                    c = server.accept();
                } catch (IOException e) {
                    return;
                }
                pool.execute(() -> echoOneByte(c));
            }
        });
        return pool;
    }

    private static void echoOneByte(SocketChannel c) {
        try (c) {
            ByteBuffer b = ByteBuffer.allocate(1);
            while (b.hasRemaining() && c.read(b) >= 0) {
                // one byte
            }
            c.write(b.flip());
            while (c.read(b.clear()) >= 0) {
                // until the client closes
            }
        } catch (IOException e) {
            // a client that went away: its connection alone ends
        }
    }

    // -------------------------------------------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void twoHundredConnectsFromVirtualThreadsToALiveListenerAllSucceed(String transport) throws Exception {
        Path java = PeerJvm.javaWithVirtualThreads();
        Assumptions.assumeTrue(java != null, "no Java 21 or later on this host for a peer with virtual threads");
        ServerSocketChannel server = track(provider(transport).openServerSocketChannel());
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        echoServer(server);
        int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
        PeerJvm client = track(PeerJvm.peer(java, shm.dir, rules(transport)));
        for (int round = 0; round < 3; round++) {
            String burst = client.ask("vburst " + port + " 200", "BURST ");
            System.out.println(transport + ": 200 connects from virtual threads, round " + round + ": " + burst);
            assertEquals("BURST 200 0 none", burst, "every connect of the burst succeeds, as on TCP");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void clientsKilledDuringAConnectBurstLeaveTheServerAtItsBaselineDescriptors(String transport) throws Exception {
        PeerJvm server = peer(transport);
        int port = Integer.parseInt(server.ask("listen", "PORT ").substring(5));
        server.ask("serve", "SERVING");
        // One connection first: it starts what a server keeps for its life (the fabric's watcher, the engine).
        oneEcho(transport, port);
        int baseline = settledDescriptors(server);
        String baselineTargets = server.ask("fdlist", "FDLIST ");
        for (int round = 0; round < 2; round++) {
            List<PeerJvm> clients = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                PeerJvm c = peer(transport);
                clients.add(c);
                c.ask("burst " + port + " 8", "LOOPING");
            }
            long servedBefore = served(server);
            long deadline = System.nanoTime() + ShmNio.TIMEOUT_NANOS;
            while (served(server) < servedBefore + 100) {
                assertTrue(System.nanoTime() - deadline < 0, "the server served no burst: " + server.output());
                Thread.onSpinWait();
            }
            for (PeerJvm c : clients) {
                c.kill();
            }
            int peak = descriptors(server);

            int after = peak;
            deadline = System.nanoTime() + ShmNio.TIMEOUT_NANOS;
            while (after > baseline && System.nanoTime() - deadline < 0) {
                server.poll("NOTHING", 50);
                after = descriptors(server);
            }
            System.out.println(transport + ": server descriptors " + baseline + " at baseline, " + peak
                + " when 3 bursting clients were killed, " + after + " after");
            if (after > baseline) {
                fail("the server holds " + after + " descriptors after its clients were killed, " + baseline
                    + " before; held now and not then: "
                    + heldNowNotThen(baselineTargets, server.ask("fdlist", "FDLIST ")));
            }
        }
        oneEcho(transport, port);
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void aLargeBacklogHoldsThatManyConnectsWaitingForAccept(String transport) throws Exception {
        int n = 1100;
        ServerSocketChannel server = track(provider(transport).openServerSocketChannel());
        server.bind(new InetSocketAddress("127.0.0.1", 0), n + 100);
        server.configureBlocking(false);
        Selector selector = track(provider(transport).openSelector());
        server.register(selector, SelectionKey.OP_ACCEPT);
        int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
        PeerJvm client = peer(transport);
        client.ask("nbhold " + port + " " + n, "PENDING");
        // The server selects (as a server loop does) but accepts nothing until every connect has finished: the
        // connections wait in its backlog.
        String held = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (held == null) {
            assertTrue(System.nanoTime() - deadline < 0, "the connects never finished: " + client.output());
            selector.selectNow();
            selector.selectedKeys().clear();
            held = client.poll("HELD ", 10);
        }
        System.out.println(transport + ": " + n + " connects to a listener of backlog " + (n + 100)
            + " that accepts none yet: " + held);
        assertEquals("HELD " + n + " 0 none", held, "every connect waits for accept within the backlog");
        selector.close();
        server.configureBlocking(true);
        for (int i = 0; i < n; i++) {
            server.accept().close();
        }
        client.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void aReplyWrittenAfterThePeersOrderlyCloseIsSilent(String transport) throws Exception {
        ServerSocketChannel server = track(provider(transport).openServerSocketChannel());
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        int failures = 0;
        String first = null;
        for (int round = 0; round < 200; round++) {
            SocketChannel client = provider(transport).openSocketChannel();
            client.connect(server.getLocalAddress());
            try (SocketChannel s = server.accept()) {
                client.write(ByteBuffer.wrap(new byte[100]));
                client.close();
                ByteBuffer in = ByteBuffer.allocate(200);
                while (s.read(in) >= 0) {
                    // until the client's FIN
                }
                assertEquals(100, in.position());
                try {
                    s.write(ByteBuffer.wrap(new byte[10]));
                    assertEquals(-1, s.read(in.clear()));
                } catch (IOException e) {
                    failures++;
                    if (first == null) {
                        first = e.toString();
                    }
                }
            }
        }
        System.out.println(transport + ": a reply after the peer's orderly close failed " + failures + " of 200: "
            + first);
        assertEquals(0, failures, "a reply written after the peer's orderly close (its bytes read, then -1) is"
            + " accepted and the next read is -1, as on TCP: " + first);
    }

    // -------------------------------------------------------------------------------------------------------------
    // Rendezvous socket files (shm only: TCP leaves nothing in a file system).

    @Test
    void listenerSocketFilesAreGoneAfterCloseNormalExitAndSigterm() throws Exception {
        PeerJvm p = peer("shm");
        int port = Integer.parseInt(p.ask("listen", "PORT ").substring(5));
        assertTrue(Files.exists(shm.listenerSocket(port)), "a listener has its rendezvous socket");
        p.ask("closelisten", "LISTEN-CLOSED");
        assertFalse(Files.exists(shm.listenerSocket(port)), "closing the listener removes its socket file");

        port = Integer.parseInt(p.ask("listen", "PORT ").substring(5));
        p.send("exit");
        assertEquals(0, p.awaitExit());
        assertFalse(Files.exists(shm.listenerSocket(port)), "a normal exit removes the socket file");

        p = peer("shm");
        port = Integer.parseInt(p.ask("listen", "PORT ").substring(5));
        p.terminate();
        assertFalse(Files.exists(shm.listenerSocket(port)), "SIGTERM removes the socket file (shutdown hooks)");
        assertEquals(List.of(), socketFiles(), "no rendezvous socket is left");
    }

    @Test
    void aStaleSocketOfAKilledProcessIsRemovedAtTheNextBind() throws Exception {
        PeerJvm p = peer("shm");
        int port = Integer.parseInt(p.ask("listen", "PORT ").substring(5));
        p.kill();
        assertTrue(Files.exists(shm.listenerSocket(port)), "SIGKILL runs no hook: the socket file stays");
        SocketChannel c = track(shm.provider.openSocketChannel());
        try {
            c.connect(new InetSocketAddress("127.0.0.1", port));
            fail("a connect to a dead listener succeeded");
        } catch (IOException e) {
            // As the JDK's: "Connection refused"; the fabric's account is the cause.
            assertEquals("Connection refused", e.getMessage());
            assertTrue(e.getCause() != null && e.getCause().getMessage().contains("left by a process that is gone"),
                "the refusal's cause says the listener is gone: " + e.getCause());
        }
        ServerSocketChannel other = track(shm.provider.openServerSocketChannel());
        other.bind(new InetSocketAddress("127.0.0.1", 0));
        int otherPort = ((InetSocketAddress) other.getLocalAddress()).getPort();
        assertFalse(Files.exists(shm.listenerSocket(port)), "the next bind removed the dead process's socket file");
        assertEquals(List.of(shm.listenerSocket(otherPort).getFileName().toString()), socketFiles(),
            "the live listener's socket file stays");
        other.close();
    }

    // -------------------------------------------------------------------------------------------------------------

    private List<String> socketFiles() throws IOException {
        List<String> out = new ArrayList<>();
        for (String name : shm.entries()) {
            if (name.startsWith("l-") && name.endsWith(".sock")) {
                out.add(name);
            }
        }
        return out;
    }

    private void oneEcho(String transport, int port) throws IOException {
        try (SocketChannel c = provider(transport).openSocketChannel()) {
            c.connect(new InetSocketAddress("127.0.0.1", port));
            c.write(ByteBuffer.wrap(new byte[] {9}));
            ByteBuffer b = ByteBuffer.allocate(1);
            while (b.hasRemaining()) {
                assertTrue(c.read(b) >= 0, "the server answers");
            }
            assertEquals(9, b.get(0));
        }
    }

    /** The descriptor targets in {@code now} beyond those in {@code then} (both "FDLIST a,b,..." answers). */
    private static List<String> heldNowNotThen(String then, String now) {
        List<String> extra = new ArrayList<>(List.of(now.substring(7).split(",")));
        for (String name : then.substring(7).split(",")) {
            extra.remove(name);
        }
        return extra;
    }

    private static long served(PeerJvm server) throws Exception {
        return Long.parseLong(server.ask("served", "SERVED ").substring(7));
    }

    private static int descriptors(PeerJvm peer) throws Exception {
        return Integer.parseInt(peer.ask("fds", "FDS ").substring(4));
    }

    /** The peer's descriptor count once two readings 100 ms apart agree (bounded). */
    private static int settledDescriptors(PeerJvm peer) throws Exception {
        int last = descriptors(peer);
        for (int i = 0; i < 50; i++) {
            peer.poll("NOTHING", 100);
            int now = descriptors(peer);
            if (now == last) {
                return now;
            }
            last = now;
        }
        return last;
    }
}
