package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.engine.Engines;
import io.rdmanio.selector.config.Action;
import io.rdmanio.selector.config.RdmanioConfig;
import io.rdmanio.selector.config.Route;
import io.rdmanio.selector.config.Router;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A server bound under a {@code both} rule listens on the fabric and on TCP at the same port: clients of either
 * transport are accepted, through a selector or by a blocking accept that waits on both.
 */
class BothTransportsServerTest extends NioTestSupport {

    private static final SelectorProvider PROVIDER = new RdmaSelectorProvider(new RdmanioConfig(new Router() {
        @Override
        public Route forBind(InetSocketAddress local) {
            return new Route(Action.BOTH, "test: bind both");
        }

        @Override
        public Route forConnect(InetSocketAddress remote) {
            return new Route(Action.RDMA, "test: connect rdma");
        }
    }, (peer, listening) -> Engines.get("loopback"), "loopback", null));

    private static final SelectorProvider JDK = RdmaSelectorProvider.jdkProvider();

    @Override
    protected SelectorProvider provider() {
        return PROVIDER;
    }

    private SocketChannel tcpClient(ServerSocketChannel server) throws Exception {
        SocketChannel c = track(JDK.openSocketChannel());
        assertTrue(c.connect(server.getLocalAddress()));
        return c;
    }

    private SocketChannel fabricClient(ServerSocketChannel server) throws Exception {
        SocketChannel c = client();
        assertTrue(c.connect(server.getLocalAddress()));
        assertTrue(c.toString().contains("loopback"), c.toString());
        return c;
    }

    private void exchange(SocketChannel client, SocketChannel accepted) throws Exception {
        client.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        ByteBuffer in = ByteBuffer.allocate(3);
        readFully(accepted, in);
        assertArrayEquals(new byte[] {1, 2, 3}, in.array());
    }

    @Test
    void selectorAcceptsFromBothTransports() throws Exception {
        ServerSocketChannel server = server();
        assertTrue(server.toString().contains("tcp and loopback"), server.toString());
        server.configureBlocking(false);
        Selector sel = selector();
        SelectionKey key = server.register(sel, SelectionKey.OP_ACCEPT);
        assertEquals(0, sel.selectNow());
        SocketChannel tcp = tcpClient(server);
        SocketChannel fabric = fabricClient(server);
        List<SocketChannel> accepted = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (accepted.size() < 2) {
            assertTrue(System.nanoTime() - deadline < 0, "both accepted in time: " + accepted);
            sel.select(1000);
            if (sel.selectedKeys().remove(key)) {
                SocketChannel a;
                while ((a = server.accept()) != null) {
                    accepted.add(track(a));
                }
            }
        }
        assertNull(server.accept());
        SocketChannel overTcp = accepted.stream().filter(a -> a.toString().contains("tcp")).findFirst().orElseThrow();
        SocketChannel overFabric = accepted.stream().filter(a -> a.toString().contains("loopback")).findFirst().orElseThrow();
        exchange(tcp, overTcp);
        exchange(fabric, overFabric);
        assertEquals(tcp.getLocalAddress(), overTcp.getRemoteAddress());
    }

    private static void assertNull(Object o) {
        assertEquals(null, o);
    }

    @Test
    void blockingAcceptWaitsForEither() throws Exception {
        ServerSocketChannel server = server();
        for (int round = 0; round < 3; round++) {
            AtomicReference<Thread> t = new AtomicReference<>();
            CompletableFuture<SocketChannel> f = start("acceptor", server::accept, t);
            awaitBlocked(t.get(), "accept");
            SocketChannel tcp = tcpClient(server);
            SocketChannel a = track(await(f));
            assertTrue(a.toString().contains("tcp"), a.toString());
            exchange(tcp, a);

            f = start("acceptor", server::accept, t);
            awaitBlocked(t.get(), "accept");
            SocketChannel fabric = fabricClient(server);
            a = track(await(f));
            assertTrue(a.toString().contains("loopback"), a.toString());
            exchange(fabric, a);
        }
    }

    @Test
    void adaptorAcceptTimesOutThenAccepts() throws Exception {
        ServerSocketChannel server = server();
        ServerSocket ss = server.socket();
        ss.setSoTimeout(50);
        assertThrows(SocketTimeoutException.class, ss::accept);
        assertTrue(server.isOpen());
        ss.setSoTimeout((int) TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        SocketChannel fabric = fabricClient(server);
        SocketChannel a = track(ss.accept().getChannel());
        exchange(fabric, a);
    }

    @Test
    void closeWakesBlockedAcceptor() throws Exception {
        ServerSocketChannel server = server();
        AtomicReference<Thread> t = new AtomicReference<>();
        CompletableFuture<SocketChannel> f = start("acceptor", server::accept, t);
        awaitBlocked(t.get(), "accept");
        server.close();
        awaitFailure(AsynchronousCloseException.class, f);
    }

    @Test
    void interruptClosesBlockedAcceptor() throws Exception {
        ServerSocketChannel server = server();
        InetSocketAddress address = (InetSocketAddress) server.getLocalAddress();
        AtomicReference<Thread> t = new AtomicReference<>();
        CompletableFuture<SocketChannel> f = start("acceptor", server::accept, t);
        awaitBlocked(t.get(), "accept");
        t.get().interrupt();
        awaitFailure(ClosedByInterruptException.class, f);
        assertFalse(server.isOpen());
        // Both listeners are gone: clients of either transport are refused.
        SocketChannel tcp = track(JDK.openSocketChannel());
        assertThrows(java.net.ConnectException.class, () -> tcp.connect(address));
        SocketChannel fabric = client();
        assertThrows(java.net.ConnectException.class, () -> fabric.connect(address));
    }
}
