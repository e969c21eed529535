package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.Pipe;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One rdmanio selector holding a fabric channel, a TCP channel, a JDK pipe and a JDK datagram channel: each
 * kind's readiness alone wakes a blocked select, and all are reported together.
 */
class MixedSelectorTest extends NioTestSupport {

    /** 127.0.0.1 is carried by the fabric; 127.0.0.2 (also loopback) stays on TCP. */
    static final InetAddress FABRIC_ADDRESS = InetAddress.getLoopbackAddress();
    static final InetAddress TCP_ADDRESS = loopback2();

    private final RdmaSelectorProvider provider = new RdmaSelectorProvider(TestRouting.fabricFor(
            a -> a.getAddress().equals(FABRIC_ADDRESS), (peer, listening) -> engine(), "test"));

    private SocketChannel[] fabric;
    private SocketChannel[] tcp;
    private Pipe pipe;
    private DatagramChannel[] udp;
    private Selector sel;
    private SelectionKey fabricKey;
    private SelectionKey tcpKey;
    private SelectionKey pipeKey;
    private SelectionKey udpKey;

    private static InetAddress loopback2() {
        try {
            return InetAddress.getByAddress(new byte[] {127, 0, 0, 2});
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    /** The engine carrying the fabric half: the engine on the loopback fabric. */
    protected io.rdmanio.core.engine.Engine engine() {
        try {
            return io.rdmanio.core.engine.Engines.get("loopback");
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    protected RdmaSelectorProvider provider() {
        return provider;
    }

    private SocketChannel[] pairOn(InetAddress address) throws Exception {
        ServerSocketChannel s = track(provider.openServerSocketChannel());
        s.bind(new InetSocketAddress(address, 0));
        SocketChannel c = track(provider.openSocketChannel());
        assertTrue(c.connect(s.getLocalAddress()));
        SocketChannel a = track(s.accept());
        assertNotNull(a);
        a.configureBlocking(false);
        return new SocketChannel[] {c, a};
    }

    @BeforeEach
    void openAll() throws Exception {
        fabric = pairOn(FABRIC_ADDRESS);
        tcp = pairOn(TCP_ADDRESS);
        assertTrue(fabric[1].toString().contains(engine().fabricName()), "fabric half routed to the fabric: " + fabric[1]);
        assertTrue(tcp[1].toString().contains("tcp"), "TCP half routed to the JDK: " + tcp[1]);
        pipe = provider.openPipe();
        track(pipe.sink());
        track(pipe.source());
        pipe.source().configureBlocking(false);
        udp = new DatagramChannel[] {track(provider.openDatagramChannel()), track(provider.openDatagramChannel())};
        udp[1].bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        udp[1].configureBlocking(false);
        sel = selector();
        fabricKey = fabric[1].register(sel, SelectionKey.OP_READ);
        tcpKey = tcp[1].register(sel, SelectionKey.OP_READ);
        pipeKey = pipe.source().register(sel, SelectionKey.OP_READ);
        udpKey = udp[1].register(sel, SelectionKey.OP_READ);
    }

    private void send(SelectionKey which) throws Exception {
        ByteBuffer b = ByteBuffer.wrap(new byte[] {7, 8, 9});
        if (which == fabricKey) {
            fabric[0].write(b);
        } else if (which == tcpKey) {
            tcp[0].write(b);
        } else if (which == pipeKey) {
            pipe.sink().write(b);
        } else {
            udp[0].send(b, udp[1].getLocalAddress());
        }
    }

    private void drain(SelectionKey which) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(3);
        SelectableChannel ch = which.channel();
        if (ch instanceof DatagramChannel) {
            assertNotNull(((DatagramChannel) ch).receive(b));
        } else {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (b.hasRemaining()) {
                assertTrue(System.nanoTime() - deadline < 0);
                ((java.nio.channels.ReadableByteChannel) ch).read(b);
            }
        }
        assertArrayEquals(new byte[] {7, 8, 9}, b.array());
    }

    @Test
    void eachKindAloneWakesABlockedSelect() throws Exception {
        for (SelectionKey k : new SelectionKey[] {fabricKey, tcpKey, pipeKey, udpKey}) {
            AtomicReference<Thread> t = new AtomicReference<>();
            CompletableFuture<Set<SelectionKey>> f = start("selector", () -> {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
                while (System.nanoTime() - deadline < 0) {
                    if (sel.select() > 0) {
                        Set<SelectionKey> got = new HashSet<>(sel.selectedKeys());
                        sel.selectedKeys().clear();
                        return got;
                    }
                }
                return Set.of();
            }, t);
            awaitBlocked(t.get(), "select");
            send(k);
            assertEquals(Set.of(k), await(f), "woken by " + k.channel());
            assertEquals(SelectionKey.OP_READ, k.readyOps());
            drain(k);
        }
    }

    @Test
    void allKindsReportedTogether() throws Exception {
        for (SelectionKey k : new SelectionKey[] {fabricKey, tcpKey, pipeKey, udpKey}) {
            send(k);
        }
        Set<SelectionKey> all = Set.of(fabricKey, tcpKey, pipeKey, udpKey);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!sel.selectedKeys().containsAll(all)) {
            assertTrue(System.nanoTime() - deadline < 0, "all four ready in time: " + sel.selectedKeys());
            sel.select(1000);
        }
        for (SelectionKey k : all) {
            drain(k);
        }
        sel.selectedKeys().clear();
        assertEquals(0, sel.selectNow(), "level-triggered: nothing left to read");
    }

    @Test
    void idleSelectBlocksInsteadOfSpinning() throws Exception {
        AtomicReference<Thread> t = new AtomicReference<>();
        CompletableFuture<Integer> f = start("selector", sel::select, t);
        awaitBlocked(t.get(), "select");
        // Sampled repeatedly, an idle selecting thread is always parked in the inner selector's wait.
        for (int i = 0; i < 20; i++) {
            StackTraceElement[] st = t.get().getStackTrace();
            boolean parked = false;
            for (int j = 0; j < Math.min(3, st.length); j++) {
                parked |= st[j].getMethodName().equals("wait") || st[j].getMethodName().equals("epollWait");
            }
            if (!parked) {
                fail("selecting thread is running while idle: " + java.util.Arrays.toString(st));
            }
            Thread.sleep(10);
        }
        sel.wakeup();
        assertEquals(0, (int) await(f));
    }

    @Test
    void closingOneKindLeavesTheOthers() throws Exception {
        fabric[1].close();
        pipe.source().close();
        sel.selectNow();
        assertFalse(sel.keys().contains(fabricKey));
        assertFalse(sel.keys().contains(pipeKey));
        send(tcpKey);
        send(udpKey);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!sel.selectedKeys().containsAll(Set.of(tcpKey, udpKey))) {
            assertTrue(System.nanoTime() - deadline < 0);
            sel.select(1000);
        }
        drain(tcpKey);
        drain(udpKey);
    }
}
