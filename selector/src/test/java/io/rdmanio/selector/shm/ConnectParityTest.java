package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.selector.RdmaSelectorProvider;
import io.rdmanio.selector.config.RdmanioConfig;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Connects on the JDK's TCP and on shm, each scenario with the same outcome on both. */
class ConnectParityTest {

    private static ShmNio shm;
    private static SelectorProvider everyAddressOnShm;

    @BeforeAll
    static void start() throws IOException {
        shm = ShmNio.open();
        everyAddressOnShm = new RdmaSelectorProvider(new RdmanioConfig(ShmNio.router(a -> true),
            (peer, listening) -> shm.engine, "shm", null));
    }

    @AfterAll
    static void stop() throws IOException {
        if (shm != null) {
            shm.close();
        }
    }

    /**
     * A server bound to the wildcard address, reached at the address it reports (shm with every address routed):
     * the JDK's channel names the wildcard {@code [::]} on a dual-stack platform, and its client connects to the
     * loopback address of the wildcard's family, named without a host name.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void aWildcardServerIsNamedAndReachedAsTheJdksIs(String transport) throws Exception {
        SelectorProvider p = transport.equals("tcp") ? SelectorProvider.provider() : everyAddressOnShm;
        InetAddress jdkWildcard;
        try (ServerSocketChannel jdk = SelectorProvider.provider().openServerSocketChannel()) {
            jdk.bind(new InetSocketAddress(0));
            jdkWildcard = ((InetSocketAddress) jdk.getLocalAddress()).getAddress();
        }
        try (ServerSocketChannel server = p.openServerSocketChannel()) {
            server.bind(new InetSocketAddress(0));
            InetSocketAddress at = (InetSocketAddress) server.getLocalAddress();
            assertEquals(jdkWildcard, at.getAddress(), "the wildcard as the JDK's channel names it");
            assertEquals(jdkWildcard, server.socket().getInetAddress());
            try (SocketChannel c = p.openSocketChannel(); SocketChannel a = connect(c, server, at)) {
                InetSocketAddress remote = (InetSocketAddress) c.getRemoteAddress();
                assertTrue(remote.getAddress().isLoopbackAddress(), remote.toString());
                assertEquals(at.getAddress() instanceof Inet6Address, remote.getAddress() instanceof Inet6Address,
                    "the loopback of the wildcard's family: " + remote);
                assertEquals("/" + remote.getAddress().getHostAddress(), remote.getAddress().toString(),
                    "no host name");
                assertEquals(c.getLocalAddress(), a.getRemoteAddress());
                c.write(ByteBuffer.wrap(new byte[] {9}));
                ByteBuffer one = ByteBuffer.allocate(1);
                while (one.hasRemaining()) {
                    assertTrue(a.read(one) >= 0);
                }
                assertEquals(9, one.get(0));
                System.out.println(transport + ": server " + at + ", client " + c.getLocalAddress() + " -> " + remote);
            }
        }
    }

    /**
     * A connect that a full backlog holds, closed by its client before the listener had room (as a client's connect
     * timeout closes it): TCP's client, closed in SYN_SENT, never reaches the server, so the listener's next room goes
     * to a later client and it never accepts a connection from the closed one. The same on shm, where the closed
     * pending connect gives its request up once it has waited a second without an answer.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void aHeldConnectClosedByItsClientNeverReachesTheServer(String transport) throws Exception {
        SelectorProvider p = transport.equals("tcp") ? SelectorProvider.provider() : shm.provider;
        try (ServerSocketChannel server = p.openServerSocketChannel();
             SocketChannel c0 = p.openSocketChannel(); SocketChannel c1 = p.openSocketChannel();
             SocketChannel c2 = p.openSocketChannel(); SocketChannel c3 = p.openSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0), 1);
            c0.connect(server.getLocalAddress());
            c1.connect(server.getLocalAddress());
            c2.configureBlocking(false);
            c2.connect(server.getLocalAddress());
            Thread.sleep(300);
            assertFalse(c2.finishConnect(), "the third connect is held by the full backlog");
            c2.close();
            // Past the grace a closed pending connect has (and TCP's first SYN retry, which a closed socket never
            // makes).
            Thread.sleep(2000);
            try (SocketChannel a0 = server.accept(); SocketChannel a1 = server.accept()) {
                assertEquals(c0.getLocalAddress(), a0.getRemoteAddress());
                assertEquals(c1.getLocalAddress(), a1.getRemoteAddress());
                c3.connect(server.getLocalAddress());
                try (SocketChannel a3 = server.accept()) {
                    assertEquals(c3.getLocalAddress(), a3.getRemoteAddress(), "the room went to the next client");
                }
                Thread.sleep(300);
                server.configureBlocking(false);
                assertNull(server.accept(), "nothing of the closed connect reaches the server");
            }
            assertTrue(c3.isConnected());
        }
    }

    /**
     * A connect to a port nobody listens on, blocking, non-blocking (finishConnect after the selector's OP_CONNECT)
     * and through the socket adaptor: the JDK's exception and message, "Connection refused", on both; on shm the
     * fabric's account of the refusal is its cause.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void aRefusedConnectSaysWhatTheJdkSays(String transport) throws Exception {
        SelectorProvider p = transport.equals("tcp") ? SelectorProvider.provider() : shm.provider;
        InetSocketAddress dead;
        try (ServerSocketChannel gone = SelectorProvider.provider().openServerSocketChannel()) {
            gone.bind(new InetSocketAddress("127.0.0.1", 0));
            dead = (InetSocketAddress) gone.getLocalAddress();
        }
        java.util.List<Throwable> refusals = new java.util.ArrayList<>();
        try (SocketChannel c = p.openSocketChannel()) {
            refusals.add(assertThrows(java.net.ConnectException.class, () -> c.connect(dead)));
            assertFalse(c.isOpen());
            assertNotBound(c);
        }
        try (SocketChannel c = p.openSocketChannel(); java.nio.channels.Selector sel = p.openSelector()) {
            c.configureBlocking(false);
            assertFalse(c.connect(dead));
            c.register(sel, java.nio.channels.SelectionKey.OP_CONNECT);
            assertEquals(1, sel.select(20_000));
            refusals.add(assertThrows(java.net.ConnectException.class, c::finishConnect));
            assertFalse(c.isOpen());
            assertNotBound(c);
        }
        try (SocketChannel c = p.openSocketChannel()) {
            refusals.add(assertThrows(java.net.ConnectException.class, () -> c.socket().connect(dead, 20_000)));
            assertNotBound(c);
        }
        for (Throwable e : refusals) {
            assertEquals("Connection refused", e.getMessage());
            if (transport.equals("tcp")) {
                assertNull(e.getCause());
            } else {
                assertTrue(e.getCause() instanceof java.net.ConnectException, String.valueOf(e.getCause()));
                assertTrue(e.getCause().getMessage().startsWith("Connection refused: no listener at " + dead),
                    e.getCause().getMessage());
            }
        }
    }

    /**
     * A channel whose connect failed was never bound, as the JDK's, which learns its address only when a connect
     * completes: its socket is not bound and has no local port or address (before, a refused shm connect left the
     * address the fabric had connected from).
     */
    private static void assertNotBound(SocketChannel c) {
        assertFalse(c.socket().isBound(), "bound after a refused connect");
        assertEquals(-1, c.socket().getLocalPort());
        assertNull(c.socket().getLocalSocketAddress());
    }

    /**
     * A blocking connect returns, and a non-blocking accept made at once finds the connection: the kernel queues it
     * before the client's connect completes on loopback, and shm's listener side is established before its client's.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void aNonBlockingAcceptRightAfterAConnectFindsTheConnection(String transport) throws Exception {
        SelectorProvider p = transport.equals("tcp") ? SelectorProvider.provider() : shm.provider;
        try (ServerSocketChannel server = p.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            server.configureBlocking(false);
            for (int i = 0; i < 30; i++) {
                try (SocketChannel c = p.openSocketChannel()) {
                    assertTrue(c.connect(server.getLocalAddress()));
                    try (SocketChannel a = server.accept()) {
                        assertNotNull(a, "round " + i + ": nothing to accept right after the connect returned");
                        assertEquals(c.getLocalAddress(), a.getRemoteAddress());
                    }
                }
            }
        }
    }

    /**
     * A server that accepts and at once closes: each blocking connect succeeds, and the client then reads the end
     * of the stream, as over TCP. Over shm the listener's DISCONNECT could reach the client before the message that
     * completes its connect (UP), which then failed "Connection refused" for a connection the server had accepted.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void aConnectToAServerThatAcceptsAndClosesAtOnceSucceeds(String transport) throws Exception {
        SelectorProvider p = transport.equals("tcp") ? SelectorProvider.provider() : shm.provider;
        int rounds = 40;
        try (ServerSocketChannel server = p.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            Thread acceptor = new Thread(() -> {
                for (int i = 0; i < rounds; i++) {
                    try (SocketChannel a = server.accept()) {
                        // closed at once
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "acceptor");
            acceptor.start();
            try {
                for (int i = 0; i < rounds; i++) {
                    try (SocketChannel c = p.openSocketChannel()) {
                        assertTrue(c.connect(server.getLocalAddress()), "round " + i);
                        assertEquals(-1, c.read(ByteBuffer.allocate(8)), "round " + i + ": the end of the stream");
                    }
                }
            } finally {
                acceptor.join(10_000);
            }
        }
    }

    /**
     * Under the rules that name the loopback (the README's), a server bound to the wildcard is reached at
     * 127.0.0.1 and ::1 over the fabric, as the JDK's is over TCP; before, its bind stayed on TCP and the routed
     * clients were refused.
     */
    @org.junit.jupiter.api.Test
    void aWildcardServerIsReachedOverTheFabricUnderLoopbackRules() throws Exception {
        io.rdmanio.selector.config.Rules rules = io.rdmanio.selector.config.Rules.parse("loopback.rules",
            "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n", InetAddress::getAllByName);
        SelectorProvider p = new RdmaSelectorProvider(new RdmanioConfig(rules, (peer, listening) -> shm.engine,
            "shm", null));
        try (ServerSocketChannel server = p.openServerSocketChannel()) {
            server.bind(new InetSocketAddress(0));
            int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
            for (String host : new String[] {"127.0.0.1", "::1"}) {
                try (SocketChannel c = p.openSocketChannel();
                     SocketChannel a = connect(c, server, new InetSocketAddress(host, port))) {
                    assertTrue(c.toString().contains("shm connected"), "over the fabric: " + c);
                    c.write(ByteBuffer.wrap(new byte[] {5}));
                    ByteBuffer one = ByteBuffer.allocate(1);
                    while (one.hasRemaining()) {
                        assertTrue(a.read(one) >= 0);
                    }
                    assertEquals(5, one.get(0));
                }
            }
        }
    }

    private static SocketChannel connect(SocketChannel c, ServerSocketChannel server, InetSocketAddress at)
            throws IOException {
        c.connect(at);
        return server.accept();
    }
}
