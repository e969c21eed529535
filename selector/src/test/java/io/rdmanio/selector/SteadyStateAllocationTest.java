package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.engine.Engines;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The data path of a fabric channel and of the selector allocates nothing per message in steady state: a
 * ping-pong through one selector, measured with the thread's allocation counter, costs no more than the same
 * ping-pong on the JDK's own TCP channels and selector (whose selected-key set allocates a node per key).
 */
class SteadyStateAllocationTest extends NioTestSupport {

    private static final SelectorProvider FABRIC = new RdmaSelectorProvider(TestRouting.fabricFor(
            a -> a.getAddress().isLoopbackAddress(), (peer, listening) -> Engines.get("loopback"), "loopback"));

    private SelectorProvider provider = FABRIC;

    @Override
    protected SelectorProvider provider() {
        return provider;
    }

    @Test
    void pingPongThroughSelectorAllocatesNoMoreThanTheJdk() throws Exception {
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(mx instanceof com.sun.management.ThreadMXBean, "needs the thread allocation counter");
        com.sun.management.ThreadMXBean bean = (com.sun.management.ThreadMXBean) mx;
        provider = RdmaSelectorProvider.jdkProvider();
        long jdk = bytesPerMessage(bean);
        provider = FABRIC;
        long fabric = bytesPerMessage(bean);
        System.out.println("bytes allocated per message: jdk tcp " + jdk + ", rdmanio loopback fabric " + fabric);
        assertTrue(fabric <= jdk, "per message, rdmanio allocated " + fabric + " bytes, the JDK " + jdk);
    }

    private long bytesPerMessage(com.sun.management.ThreadMXBean bean) throws Exception {
        long thread = Thread.currentThread().getId();
        ServerSocketChannel server = server();
        SocketChannel c = client();
        c.connect(server.getLocalAddress());
        SocketChannel a = track(server.accept());
        c.configureBlocking(false);
        a.configureBlocking(false);
        Selector sel = selector();
        SelectionKey ck = c.register(sel, SelectionKey.OP_READ);
        SelectionKey ak = a.register(sel, SelectionKey.OP_READ);
        ByteBuffer out = ByteBuffer.allocateDirect(64);
        ByteBuffer in = ByteBuffer.allocateDirect(64);
        ByteBuffer[] gather = {ByteBuffer.allocateDirect(16), ByteBuffer.allocateDirect(48)};
        int warmup = 20_000;
        int measured = 20_000;
        long before = 0;
        for (int i = 0; i < warmup + measured; i++) {
            if (i == warmup) {
                before = bean.getThreadAllocatedBytes(thread);
            }
            SocketChannel from = (i & 1) == 0 ? c : a;
            SocketChannel to = (i & 1) == 0 ? a : c;
            SelectionKey toKey = (i & 1) == 0 ? ak : ck;
            if ((i & 2) == 0) {
                out.clear();
                assertEquals(64, from.write(out));
            } else {
                gather[0].clear();
                gather[1].clear();
                assertEquals(64L, from.write(gather));
            }
            in.clear();
            for (int spins = 0; in.hasRemaining(); spins++) {
                if (spins == 1000) {
                    fail("message " + i + " did not arrive");
                }
                sel.select(1000);
                if (sel.selectedKeys().remove(toKey)) {
                    to.read(in);
                }
            }
            sel.selectedKeys().clear();
        }
        return (bean.getThreadAllocatedBytes(thread) - before) / measured;
    }
}
