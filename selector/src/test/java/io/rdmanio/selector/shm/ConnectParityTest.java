package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
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

    private static SocketChannel connect(SocketChannel c, ServerSocketChannel server, InetSocketAddress at)
            throws IOException {
        c.connect(at);
        return server.accept();
    }
}
