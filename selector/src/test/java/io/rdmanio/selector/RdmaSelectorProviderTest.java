package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.selector.config.RunStats;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.IllegalSelectorException;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What rdmanio adds to java.nio: routing once, the fabric's failures and sizes, counting, the JDK provider. */
class RdmaSelectorProviderTest extends NioTestSupport {

    private final InMemoryEngine engine = new InMemoryEngine();
    private SelectorProvider provider = new RdmaSelectorProvider(
            TestRouting.fabricFor(a -> a.getAddress().isLoopbackAddress(), (peer, listening) -> engine, "memory"));

    @Override
    protected SelectorProvider provider() {
        return provider;
    }

    @Test
    void jdkProviderIsTheJdksOwn() {
        SelectorProvider jdk = RdmaSelectorProvider.jdkProvider();
        assertTrue(jdk.getClass().getName().startsWith("sun.nio.ch."), jdk.getClass().getName());
        assertSame(jdk, RdmaSelectorProvider.jdkProvider());
    }

    @Test
    void aJdkSelectorRefusesAnRdmanioChannelAndGoesOn() throws Exception {
        // A JDK selector refuses rdmanio's channel at register, as it refuses any other provider's channel, and
        // keeps serving its own channels.
        SocketChannel[] p = pair();
        p[0].configureBlocking(false);
        Pipe pipe = RdmaSelectorProvider.jdkProvider().openPipe();
        track(pipe.source());
        track(pipe.sink());
        try (Selector jdk = RdmaSelectorProvider.jdkProvider().openSelector()) {
            assertThrows(IllegalSelectorException.class, () -> p[0].register(jdk, SelectionKey.OP_READ));
            jdk.selectNow();
            pipe.source().configureBlocking(false);
            SelectionKey key = pipe.source().register(jdk, SelectionKey.OP_READ);
            pipe.sink().write(ByteBuffer.wrap(new byte[] {7}));
            assertEquals(1, jdk.select(5000), "the JDK selector still serves its own channels");
            assertTrue(key.isReadable());
            p[0].close();
            jdk.selectNow();
        }
        p[1].write(ByteBuffer.wrap(new byte[] {1}));
    }

    @Test
    void noArgConstructorServesTcp() throws Exception {
        provider = new RdmaSelectorProvider();
        SocketChannel[] p = pair();
        assertTrue(p[0].toString().contains("tcp"), p[0].toString());
        p[0].write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        ByteBuffer in = ByteBuffer.allocate(3);
        readFully(p[1], in);
        assertArrayEquals(new byte[] {1, 2, 3}, in.array());
    }

    @Test
    void fabricUnavailableFailsConnectNamingTheCause() throws Exception {
        provider = new RdmaSelectorProvider(TestRouting.fabricFor(a -> true, (peer, listening) -> {
            throw new IOException("no RDMA device serves " + peer);
        }, "disni"));
        SocketChannel c = client();
        IOException e = assertThrows(IOException.class, () -> c.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), 9)));
        assertTrue(e.getMessage().contains("no RDMA device"), e.getMessage());
        assertFalse(c.isOpen(), "a failed connect closes the channel");
        ServerSocketChannel s = track(provider.openServerSocketChannel());
        IOException b = assertThrows(IOException.class, () -> s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
        assertTrue(b.getMessage().contains("no RDMA device"), b.getMessage());
        assertTrue(s.isOpen(), "a failed bind leaves the server channel open, as the JDK does");
    }

    @Test
    void connectionsAndBytesCountedPerTransport() throws Exception {
        RunStats stats = RunStats.get();
        long fc = stats.fabricConnections();
        long fb = stats.fabricBytes();
        SocketChannel[] p = pair();
        assertEquals(fc + 2, stats.fabricConnections(), "connect and accept each count one");
        p[0].write(ByteBuffer.allocate(100));
        readFully(p[1], ByteBuffer.allocate(100));
        assertEquals(fb + 200, stats.fabricBytes(), "bytes written and bytes read");

        provider = new RdmaSelectorProvider(TestRouting.allTcp());
        long tc = stats.tcpConnections();
        long tb = stats.tcpBytes();
        SocketChannel[] q = pair();
        assertEquals(tc + 2, stats.tcpConnections());
        q[0].write(ByteBuffer.allocate(50));
        readFully(q[1], ByteBuffer.allocate(50));
        assertEquals(tb + 100, stats.tcpBytes());
    }

    @Test
    void receiveBufferOptionSizesTheFabricConnection() throws Exception {
        ServerSocketChannel server = server();
        SocketChannel c = client();
        c.setOption(StandardSocketOptions.SO_RCVBUF, 1000);
        c.connect(server.getLocalAddress());
        SocketChannel a = track(server.accept());
        a.configureBlocking(false);
        long total = 0;
        for (int i = 0; i < 100; i++) {
            int n = a.write(ByteBuffer.allocate(300));
            if (n == 0) {
                break;
            }
            total += n;
        }
        assertEquals(1000, total, "a non-blocking write stops when the peer's receive buffer is full");
        try (SocketChannel jdk = SelectorProvider.provider().openSocketChannel()) {
            jdk.setOption(StandardSocketOptions.SO_RCVBUF, 1000);
            assertEquals(jdk.getOption(StandardSocketOptions.SO_RCVBUF), c.getOption(StandardSocketOptions.SO_RCVBUF),
                "getOption reads the value as the kernel rounds it, the window is sized from the value as given");
        }
        // OP_WRITE comes back once the peer reads.
        Selector sel = selector();
        SelectionKey key = a.register(sel, SelectionKey.OP_WRITE);
        assertEquals(0, sel.selectNow());
        readFully(c, ByteBuffer.allocate(1000));
        selectUntil(sel, key, SelectionKey.OP_WRITE);
    }

    @Test
    void selectNowDrivesProgressAndReportsWhatItDelivered() throws Exception {
        // The in-memory engine delivers bytes only in progress(): selectNow must drive it and report the result.
        SocketChannel[] p = pair();
        p[1].configureBlocking(false);
        Selector sel = selector();
        SelectionKey key = p[1].register(sel, SelectionKey.OP_READ);
        assertEquals(0, sel.selectNow());
        p[0].write(ByteBuffer.wrap(new byte[] {4}));
        assertEquals(1, sel.selectNow());
        assertTrue(key.isReadable());
        ByteBuffer one = ByteBuffer.allocate(1);
        assertEquals(1, p[1].read(one));
        sel.selectedKeys().clear();
        assertEquals(0, sel.selectNow(), "level-triggered: nothing left");
    }

    @Test
    void routedOnceAtConnect() throws Exception {
        ServerSocketChannel server = server();
        SocketChannel c = client();
        assertTrue(c.toString().contains("unconnected"), c.toString());
        c.connect(server.getLocalAddress());
        assertTrue(c.toString().contains("memory"), c.toString());
        assertTrue(server.toString().contains("memory"), server.toString());
        SocketChannel a = track(server.accept());
        assertTrue(a.toString().contains("memory"), a.toString());
    }

    @Test
    void unixDomainChannelsAreTheJdksAndShareTheSelector() throws Exception {
        SocketChannel u = track(provider.openSocketChannel(StandardProtocolFamily.UNIX));
        assertSame(RdmaSelectorProvider.jdkProvider(), u.provider());
        assertNotSame(provider, u.provider());
        u.configureBlocking(false);
        Selector sel = selector();
        SelectionKey k = u.register(sel, SelectionKey.OP_CONNECT);
        assertTrue(sel.keys().contains(k));
        // (Whether an unconnected socket reports OP_CONNECT is the JDK's own business: not asserted.)
        sel.selectNow();
        k.cancel();
        sel.selectNow();
        u.configureBlocking(true);
    }

    @Test
    void blockingConnectWaitsForTheHandshake() throws Exception {
        // The in-memory handshake finishes only when someone drives progress: a blocking connect must.
        ServerSocketChannel server = server();
        SocketChannel c = client();
        assertTrue(c.connect(server.getLocalAddress()));
        assertTrue(c.isConnected());
        SocketChannel a = track(server.accept());
        assertTrue(a.isConnected());
        c.socket().setSoTimeout((int) TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
    }
}
