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
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A client under a {@code both} rule: over the fabric when the server listens there, over TCP when it does not,
 * in blocking and non-blocking mode, with its keys following it; when neither listens, both causes are named.
 */
class BothTransportsClientTest extends NioTestSupport {

    /** Servers bind on the fabric (rdma) or on TCP (jdk); clients connect under both. */
    private static final SelectorProvider BOTH_CLIENTS = clients(Action.BOTH);
    /** The same under auto, whose clients also try TCP when the fabric handshake fails. */
    private static final SelectorProvider AUTO_CLIENTS = clients(Action.AUTO);

    private static final SelectorProvider JDK = RdmaSelectorProvider.jdkProvider();

    private SelectorProvider provider = BOTH_CLIENTS;

    private static SelectorProvider clients(Action action) {
        return new RdmaSelectorProvider(new RdmanioConfig(new Router() {
            @Override
            public Route forBind(InetSocketAddress local) {
                return new Route(Action.RDMA, "test: bind rdma");
            }

            @Override
            public Route forConnect(InetSocketAddress remote) {
                return new Route(action, "test: connect " + action);
            }
        }, (peer, listening) -> Engines.get("loopback"), "loopback", null));
    }

    @Override
    protected SelectorProvider provider() {
        return provider;
    }

    private void under(String action) {
        provider = "auto".equals(action) ? AUTO_CLIENTS : BOTH_CLIENTS;
    }

    private ServerSocketChannel tcpServer() throws Exception {
        ServerSocketChannel s = track(JDK.openServerSocketChannel());
        s.bind(new InetSocketAddress(address(), 0));
        return s;
    }

    /** Connects in the given mode, waiting through a selector whose key was registered before connect. */
    private SocketChannel connect(SocketChannel c, InetSocketAddress to, boolean blocking) throws Exception {
        if (blocking) {
            assertTrue(c.connect(to));
            return c;
        }
        c.configureBlocking(false);
        Selector sel = selector();
        SelectionKey key = c.register(sel, SelectionKey.OP_CONNECT);
        boolean done = c.connect(to);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!done) {
            assertTrue(System.nanoTime() - deadline < 0, "connected in time: " + c);
            sel.select(1000);
            if (sel.selectedKeys().remove(key)) {
                assertTrue(key.isConnectable(), "reported: " + key.readyOps());
                // As the JDK: once OP_CONNECT is reported, finishConnect completes the connect or throws (Netty
                // treats false as "key incorrectly indicated socket channel connectable" and throws an Error).
                assertTrue(c.finishConnect(), "OP_CONNECT was reported, so finishConnect completes or throws: " + c);
                done = true;
            }
        }
        key.cancel();
        sel.selectNow();
        c.configureBlocking(true);
        return c;
    }

    private static void exchange(SocketChannel client, SocketChannel accepted) throws Exception {
        client.write(ByteBuffer.wrap(new byte[] {5, 6, 7}));
        ByteBuffer in = ByteBuffer.allocate(3);
        while (in.hasRemaining()) {
            if (accepted.read(in) < 0) {
                break;
            }
        }
        assertArrayEquals(new byte[] {5, 6, 7}, in.array());
    }

    @ParameterizedTest(name = "{0} blocking={1}")
    @CsvSource({"both,true", "both,false", "auto,true", "auto,false"})
    void overTheFabricWhenTheServerListensThere(String action, boolean blocking) throws Exception {
        under(action);
        ServerSocketChannel server = server();
        SocketChannel c = connect(client(), (InetSocketAddress) server.getLocalAddress(), blocking);
        assertTrue(c.toString().contains("loopback"), c.toString());
        exchange(c, track(server.accept()));
    }

    @ParameterizedTest(name = "{0} blocking={1}")
    @CsvSource({"both,true", "both,false", "auto,true", "auto,false"})
    void fallsBackToTcpWhenTheFabricRefuses(String action, boolean blocking) throws Exception {
        under(action);
        ServerSocketChannel server = tcpServer();
        SocketChannel c = connect(client(), (InetSocketAddress) server.getLocalAddress(), blocking);
        assertTrue(c.toString().contains("tcp"), c.toString());
        assertTrue(c.isConnected());
        assertFalse(c.isConnectionPending());
        SocketChannel a = track(server.accept());
        assertEquals(c.getLocalAddress(), a.getRemoteAddress());
        exchange(c, a);
        exchange(a, c);
    }

    @ParameterizedTest(name = "{0} blocking={1}")
    @CsvSource({"both,true", "both,false", "auto,true", "auto,false"})
    void neitherListeningNamesBothCauses(String action, boolean blocking) throws Exception {
        under(action);
        InetSocketAddress dead = new InetSocketAddress(address(), deadPort());
        SocketChannel c = client();
        ConnectException e = assertThrows(ConnectException.class, () -> connect(c, dead, blocking));
        assertEquals(1, e.getSuppressed().length, "the fabric's failure is attached: " + Arrays.toString(e.getSuppressed()));
        assertFalse(c.isOpen(), "a failed connect closes the channel");
    }

    /** Polls finishConnect in non-blocking mode with no selector at all; returns the channel once connected. */
    private static SocketChannel connectPolled(SocketChannel c, InetSocketAddress to) throws Exception {
        c.configureBlocking(false);
        boolean done = c.connect(to);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!done) {
            assertTrue(System.nanoTime() - deadline < 0, "connected in time, polling without a selector: " + c);
            done = c.finishConnect();
            Thread.onSpinWait();
        }
        return c;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"both", "auto"})
    void polledFinishConnectFallsBackWithoutASelector(String action) throws Exception {
        under(action);
        ServerSocketChannel server = tcpServer();
        SocketChannel c = connectPolled(client(), (InetSocketAddress) server.getLocalAddress());
        assertTrue(c.toString().contains("tcp"), c.toString());
        c.configureBlocking(true);
        exchange(c, track(server.accept()));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"both", "auto"})
    void polledFinishConnectToNobodyThrowsConnectException(String action) throws Exception {
        under(action);
        InetSocketAddress dead = new InetSocketAddress(address(), deadPort());
        SocketChannel c = client();
        ConnectException e = assertThrows(ConnectException.class, () -> connectPolled(c, dead));
        assertEquals(1, e.getSuppressed().length, "the fabric's failure is attached: " + Arrays.toString(e.getSuppressed()));
        assertFalse(c.isOpen(), "a failed connect closes the channel");
    }

    @ParameterizedTest(name = "timeout={0}")
    @ValueSource(ints = {0, 10_000})
    void socketAdaptorConnectFallsBack(int timeout) throws Exception {
        ServerSocketChannel server = tcpServer();
        SocketChannel c = client();
        Socket s = c.socket();
        s.connect(server.getLocalAddress(), timeout);
        assertTrue(s.isConnected());
        assertTrue(c.toString().contains("tcp"), c.toString());
        exchange(c, track(server.accept()));
    }
}
