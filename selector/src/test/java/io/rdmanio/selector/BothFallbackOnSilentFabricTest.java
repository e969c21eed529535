package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.selector.config.Action;
import io.rdmanio.selector.config.RdmanioConfig;
import io.rdmanio.selector.config.Route;
import io.rdmanio.selector.config.Router;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A client under a {@code both} rule whose fabric never answers the handshake moves to TCP after
 * {@code rdmanio.fallbackMillis} (default 1000): a blocking connect by itself, a non-blocking one because
 * its selector reports OP_CONNECT at that time with nothing arriving from the fabric.
 */
class BothFallbackOnSilentFabricTest extends NioTestSupport {

    private static final InMemoryEngine SILENT = new InMemoryEngine(true);

    private static final SelectorProvider PROVIDER = new RdmaSelectorProvider(new RdmanioConfig(new Router() {
        @Override
        public Route forBind(InetSocketAddress local) {
            return Route.NO_MATCH;
        }

        @Override
        public Route forConnect(InetSocketAddress remote) {
            return new Route(Action.BOTH, "test: connect both");
        }
    }, (peer, listening) -> SILENT, "memory", null));

    @Override
    protected SelectorProvider provider() {
        return PROVIDER;
    }

    @ParameterizedTest(name = "blocking={0}")
    @ValueSource(booleans = {true, false})
    void silentFabricHandsOverToTcp(boolean blocking) throws Exception {
        ServerSocketChannel server = server();
        assertTrue(server.toString().contains("tcp"), server.toString());
        SocketChannel c = client();
        if (blocking) {
            assertTrue(c.connect(server.getLocalAddress()));
        } else {
            c.configureBlocking(false);
            Selector sel = selector();
            SelectionKey key = c.register(sel, SelectionKey.OP_CONNECT);
            assertFalse(c.connect(server.getLocalAddress()), "the silent fabric cannot connect at once");
            assertTrue(c.toString().contains("memory"), c.toString());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            boolean done = false;
            while (!done) {
                assertTrue(System.nanoTime() - deadline < 0, "connected in time: " + c);
                // No timeout: only the fallback time can make this select return.
                sel.select();
                if (sel.selectedKeys().remove(key)) {
                    // OP_CONNECT means finishConnect completes or throws, as with the JDK.
                    assertTrue(c.finishConnect(), "OP_CONNECT was reported: " + c);
                    done = true;
                }
            }
            key.cancel();
            sel.selectNow();
            c.configureBlocking(true);
        }
        assertTrue(c.toString().contains("tcp"), c.toString());
        SocketChannel a = track(server.accept());
        c.write(ByteBuffer.wrap(new byte[] {3, 1, 4}));
        ByteBuffer in = ByteBuffer.allocate(3);
        readFully(a, in);
        assertArrayEquals(new byte[] {3, 1, 4}, in.array());
    }

    /** Silent fabric, nobody on TCP: the non-blocking connect ends in ConnectException, never in silence. */
    @Test
    void silentFabricAndRefusedTcpThrowsConnectException() throws Exception {
        InetSocketAddress dead = new InetSocketAddress(address(), deadPort());
        SocketChannel c = client();
        c.configureBlocking(false);
        Selector sel = selector();
        SelectionKey key = c.register(sel, SelectionKey.OP_CONNECT);
        assertFalse(c.connect(dead), "the silent fabric cannot connect at once");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        ConnectException refused = null;
        while (refused == null) {
            assertTrue(System.nanoTime() - deadline < 0, "an outcome in time: " + c);
            sel.select(1000);
            if (sel.selectedKeys().remove(key)) {
                try {
                    c.finishConnect();
                    fail("OP_CONNECT reported and finishConnect did not throw, with nobody listening: " + c);
                } catch (ConnectException e) {
                    refused = e;
                }
            }
        }
        assertEquals(1, refused.getSuppressed().length, "the fabric's cause is attached: " + refused);
        assertFalse(c.isOpen(), "a failed connect closes the channel");
    }
}
