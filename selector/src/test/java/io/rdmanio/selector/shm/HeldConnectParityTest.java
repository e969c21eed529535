package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A connect that a full backlog holds, closed by its client before the listener had room (as a client's connect
 * timeout closes it): TCP's client, closed in SYN_SENT, never reaches the server, so the listener's next room goes
 * to a later client and it never accepts a connection from the closed one. The same on shm, where the closed
 * pending connect gives its request up once it has waited a second without an answer.
 */
class HeldConnectParityTest {

    private static ShmNio shm;

    @BeforeAll
    static void start() throws IOException {
        shm = ShmNio.open();
    }

    @AfterAll
    static void stop() throws IOException {
        if (shm != null) {
            shm.close();
        }
    }

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
}
