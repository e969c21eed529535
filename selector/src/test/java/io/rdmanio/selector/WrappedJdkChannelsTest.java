package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.IllegalSelectorException;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Pipes and datagram channels of the rdmanio provider are rdmanio channels standing on the JDK's: their provider is
 * rdmanio's, they register with the rdmanio selector (and not with the JDK's), and they keep java.nio's contract
 * in blocking and non-blocking mode, for readiness and for close.
 */
class WrappedJdkChannelsTest extends NioTestSupport {

    private final RdmaSelectorProvider provider = new RdmaSelectorProvider(TestRouting.allTcp());

    @Override
    protected SelectorProvider provider() {
        return provider;
    }

    private Pipe pipe() throws Exception {
        Pipe p = provider.openPipe();
        track(p.sink());
        track(p.source());
        return p;
    }

    private DatagramChannel udp() throws Exception {
        DatagramChannel d = track(provider.openDatagramChannel());
        d.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        return d;
    }

    // ------------------------------------------------------------------ identity

    @Test
    void pipeEndsAndDatagramChannelsBelongToTheProvider() throws Exception {
        Pipe p = pipe();
        assertSame(provider, p.source().provider());
        assertSame(provider, p.sink().provider());
        assertSame(provider, udp().provider());
        assertSame(provider, track(provider.openDatagramChannel(java.net.StandardProtocolFamily.INET)).provider());
    }

    @Test
    void aJdkSelectorRefusesThemAsJavaNioRequires() throws Exception {
        Pipe p = pipe();
        p.source().configureBlocking(false);
        try (Selector jdk = RdmaSelectorProvider.jdkProvider().openSelector()) {
            assertThrows(IllegalSelectorException.class, () -> p.source().register(jdk, SelectionKey.OP_READ));
        }
    }

    @Test
    void rawJdkChannelsStillRegister() throws Exception {
        Pipe raw = RdmaSelectorProvider.jdkProvider().openPipe();
        track(raw.sink());
        track(raw.source());
        raw.source().configureBlocking(false);
        Selector sel = selector();
        SelectionKey k = raw.source().register(sel, SelectionKey.OP_READ);
        raw.sink().write(ByteBuffer.wrap(new byte[] {1}));
        selectUntil(sel, k, SelectionKey.OP_READ);
    }

    // ------------------------------------------------------------------ pipe

    @Test
    void pipeCarriesBytesExactInBlockingMode() throws Exception {
        Pipe p = pipe();
        byte[] data = pattern(200_000, 3);
        CompletableFuture<Void> writer = start("writer", () -> {
            ByteBuffer b = ByteBuffer.wrap(data);
            while (b.hasRemaining()) {
                p.sink().write(b);
            }
            p.sink().close();
            return null;
        }, null);
        ByteBuffer got = ByteBuffer.allocate(data.length + 1);
        int n;
        while ((n = p.source().read(got)) >= 0) {
            assertTrue(n > 0 || !got.hasRemaining(), "a blocking read returns data or end of stream");
        }
        await(writer);
        assertEquals(data.length, got.position());
        assertArrayEquals(data, java.util.Arrays.copyOf(got.array(), data.length));
    }

    @Test
    void pipeReadinessThroughTheRdmanioSelector() throws Exception {
        Pipe p = pipe();
        p.source().configureBlocking(false);
        p.sink().configureBlocking(false);
        Selector sel = selector();
        SelectionKey rk = p.source().register(sel, SelectionKey.OP_READ);
        SelectionKey wk = p.sink().register(sel, SelectionKey.OP_WRITE);
        assertSame(p.source(), rk.channel());
        // The sink is writable at once; the source not until something is written.
        selectUntil(sel, wk, SelectionKey.OP_WRITE);
        assertFalse(sel.selectedKeys().contains(rk));
        assertEquals(0, p.source().read(ByteBuffer.allocate(4)), "non-blocking read of an empty pipe");
        wk.interestOps(0);
        sel.selectedKeys().clear();
        AtomicReference<Thread> selecting = new AtomicReference<>();
        CompletableFuture<Integer> blocked = start("select", () -> sel.select(), selecting);
        awaitBlocked(selecting.get(), "select");
        p.sink().write(ByteBuffer.wrap(new byte[] {4, 5, 6}));
        assertEquals(1, await(blocked), "the pipe's readiness wakes a blocked select");
        assertTrue(sel.selectedKeys().contains(rk));
        assertTrue(rk.isReadable());
        ByteBuffer b = ByteBuffer.allocate(8);
        assertEquals(3, p.source().read(b));
    }

    @Test
    void blockingModeFollowsTheKeys() throws Exception {
        Pipe p = pipe();
        Selector sel = selector();
        assertThrows(java.nio.channels.IllegalBlockingModeException.class,
                () -> p.source().register(sel, SelectionKey.OP_READ));
        p.source().configureBlocking(false);
        SelectionKey k = p.source().register(sel, SelectionKey.OP_READ);
        assertThrows(IllegalBlockingModeException.class, () -> p.source().configureBlocking(true));
        k.cancel();
        // Cancelled and not yet selected: java.nio lets the channel block again at once.
        p.source().configureBlocking(true);
        p.sink().write(ByteBuffer.wrap(new byte[] {9}));
        ByteBuffer b = ByteBuffer.allocate(1);
        assertEquals(1, p.source().read(b));
        sel.selectNow();
        // And back to non-blocking and a new registration.
        p.source().configureBlocking(false);
        SelectionKey k2 = p.source().register(sel, SelectionKey.OP_READ);
        p.sink().write(ByteBuffer.wrap(new byte[] {8}));
        selectUntil(sel, k2, SelectionKey.OP_READ);
    }

    @Test
    void closingTheSinkGivesEndOfStreamAndCancelsItsKeys() throws Exception {
        Pipe p = pipe();
        p.source().configureBlocking(false);
        p.sink().configureBlocking(false);
        Selector sel = selector();
        SelectionKey rk = p.source().register(sel, SelectionKey.OP_READ);
        SelectionKey wk = p.sink().register(sel, 0);
        p.sink().close();
        assertFalse(wk.isValid());
        assertFalse(p.sink().isOpen());
        assertThrows(ClosedChannelException.class, () -> p.sink().write(ByteBuffer.allocate(1)));
        selectUntil(sel, rk, SelectionKey.OP_READ);
        assertEquals(-1, p.source().read(ByteBuffer.allocate(1)));
        sel.selectNow();
        assertFalse(sel.keys().contains(wk));
        p.source().close();
        sel.selectNow();
        assertTrue(sel.keys().isEmpty());
    }

    @Test
    void closeFromAnotherThreadEndsABlockedRead() throws Exception {
        Pipe p = pipe();
        AtomicReference<Thread> reader = new AtomicReference<>();
        CompletableFuture<Integer> read = start("reader", () -> p.source().read(ByteBuffer.allocate(1)), reader);
        awaitBlocked(reader.get(), "read");
        p.source().close();
        awaitFailure(AsynchronousCloseException.class, read);
    }

    @Test
    void interruptClosesTheChannelTheApplicationHolds() throws Exception {
        Pipe p = pipe();
        AtomicReference<Thread> reader = new AtomicReference<>();
        CompletableFuture<Integer> read = start("reader", () -> p.source().read(ByteBuffer.allocate(1)), reader);
        awaitBlocked(reader.get(), "read");
        reader.get().interrupt();
        awaitFailure(ClosedByInterruptException.class, read);
        assertFalse(p.source().isOpen(), "java.nio: an interrupted blocking operation closes the channel");
    }

    // ------------------------------------------------------------------ datagram

    @Test
    void datagramsBlockingExact() throws Exception {
        DatagramChannel a = udp();
        DatagramChannel b = udp();
        byte[] data = pattern(1200, 5);
        assertEquals(data.length, a.send(ByteBuffer.wrap(data), b.getLocalAddress()));
        ByteBuffer got = ByteBuffer.allocate(2000);
        SocketAddress from = b.receive(got);
        assertEquals(a.getLocalAddress(), from);
        assertEquals(data.length, got.position());
        assertArrayEquals(data, java.util.Arrays.copyOf(got.array(), data.length));
        // Connected: read and write.
        assertSame(b, b.connect(a.getLocalAddress()));
        assertTrue(b.isConnected());
        assertEquals(a.getLocalAddress(), b.getRemoteAddress());
        b.write(ByteBuffer.wrap(new byte[] {1, 2}));
        ByteBuffer two = ByteBuffer.allocate(2);
        a.receive(two);
        assertArrayEquals(new byte[] {1, 2}, two.array());
        assertSame(b, b.disconnect());
        assertFalse(b.isConnected());
    }

    @Test
    void datagramReadinessThroughTheRdmanioSelector() throws Exception {
        DatagramChannel a = udp();
        DatagramChannel b = udp();
        b.configureBlocking(false);
        assertEquals(null, b.receive(ByteBuffer.allocate(8)), "non-blocking receive with nothing queued");
        Selector sel = selector();
        SelectionKey k = b.register(sel, SelectionKey.OP_READ);
        AtomicReference<Thread> selecting = new AtomicReference<>();
        CompletableFuture<Integer> blocked = start("select", () -> sel.select(), selecting);
        awaitBlocked(selecting.get(), "select");
        a.send(ByteBuffer.wrap(new byte[] {7, 7}), b.getLocalAddress());
        assertEquals(1, await(blocked), "a datagram wakes a blocked select");
        assertTrue(k.isReadable());
        ByteBuffer got = ByteBuffer.allocate(8);
        assertEquals(a.getLocalAddress(), b.receive(got));
        assertEquals(2, got.position());
    }

    @Test
    void datagramOptionsAndCloseSemantics() throws Exception {
        DatagramChannel d = udp();
        assertSame(d, d.setOption(java.net.StandardSocketOptions.SO_RCVBUF, 65536));
        assertTrue(d.getOption(java.net.StandardSocketOptions.SO_RCVBUF) > 0);
        assertTrue(d.supportedOptions().contains(java.net.StandardSocketOptions.SO_REUSEADDR));
        SocketAddress self = d.getLocalAddress();
        d.configureBlocking(false);
        Selector sel = selector();
        SelectionKey k = d.register(sel, SelectionKey.OP_READ);
        d.close();
        assertFalse(k.isValid());
        assertThrows(ClosedChannelException.class, () -> d.send(ByteBuffer.allocate(1), self));
        sel.selectNow();
        assertTrue(sel.keys().isEmpty());
    }
}
