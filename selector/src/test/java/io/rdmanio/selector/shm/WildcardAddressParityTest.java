package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

/**
 * A server bound to the wildcard address, reached at the address it reports: on the JDK's TCP and on shm with
 * every address routed, the same outcome. The JDK's channel names the wildcard {@code [::]} on a dual-stack
 * platform, and its client connects to the loopback address of the wildcard's family, named without a host name.
 */
class WildcardAddressParityTest {

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

    private static SocketChannel connect(SocketChannel c, ServerSocketChannel server, InetSocketAddress at)
            throws IOException {
        c.connect(at);
        return server.accept();
    }
}
