package io.rdmanio.core.fabric.shm;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import org.junit.jupiter.api.Test;

class KernelListenersTest {

    private static final String HEADER =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";

    @Test
    void readsListenersFromBothTables() {
        List<String> tcp = List.of(HEADER,
            "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1",
            "   1: 0100007F:1F91 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 2");
        List<String> tcp6 = List.of(HEADER,
            "   0: 00000000000000000000000000000000:1F92 00000000000000000000000000000000:0000 0A 0 0 0 0 0 3");
        String one = KernelListeners.hint(0x1F90, tcp, tcp6);
        assertNotNull(one);
        assertTrue(one.contains("an interface's address"), one);
        assertNull(KernelListeners.hint(0x1F91, tcp, tcp6), "an established socket is no listener");
        String wild = KernelListeners.hint(0x1F92, tcp, tcp6);
        assertNotNull(wild);
        assertTrue(wild.contains("wildcard") && wild.contains("bind * 8082"), wild);
        assertNull(KernelListeners.hint(1, List.of("garbage"), List.of("0: zz:zz 0A")), "unparsable rows are skipped");
    }

    @Test
    void findsARealWildcardListener() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            String hint = KernelListeners.tcpListenerHint(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), s.getLocalPort()));
            assertNotNull(hint, "this JVM's own wildcard listener");
            assertTrue(hint.contains("wildcard"), hint);
        }
    }

    /**
     * The cheap look before the tables (a bind with {@code SO_REUSEADDR}) still finds a listener bound to one
     * address, and a port nobody holds has no hint; a port held by a connection, which that look cannot tell from
     * a listener, is read from the tables and has none either.
     */
    @Test
    void findsAListenerOnOneAddressAndNoneOnAFreePort() throws Exception {
        int free;
        try (ServerSocketChannel s = ServerSocketChannel.open()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            free = ((InetSocketAddress) s.getLocalAddress()).getPort();
            String hint = KernelListeners.tcpListenerHint((InetSocketAddress) s.getLocalAddress());
            assertNotNull(hint, "a listener on 127.0.0.1");
            assertTrue(hint.contains("an interface's address"), hint);
            try (SocketChannel c = SocketChannel.open(s.getLocalAddress()); SocketChannel a = s.accept()) {
                assertNotNull(a);
                assertNull(KernelListeners.tcpListenerHint((InetSocketAddress) c.getLocalAddress()),
                    "a connected client's port");
            }
        }
        assertNull(KernelListeners.tcpListenerHint(new InetSocketAddress(InetAddress.getLoopbackAddress(), free)),
            "the port of a listener that closed");
    }
}
