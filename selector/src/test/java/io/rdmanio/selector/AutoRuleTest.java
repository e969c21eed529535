package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.engine.Engines;
import io.rdmanio.selector.config.Action;
import io.rdmanio.selector.config.EngineSource;
import io.rdmanio.selector.config.RdmanioConfig;
import io.rdmanio.selector.config.Route;
import io.rdmanio.selector.config.Router;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import org.junit.jupiter.api.Test;

/**
 * Under {@code auto} a socket uses a fabric where the peer serves one and TCP where not: a server listens on both
 * when a fabric can listen (TCP alone when none can), a client tries the fabric and takes TCP when refused.
 */
class AutoRuleTest extends NioTestSupport {

    private static final Router AUTO = new Router() {
        @Override
        public Route forBind(InetSocketAddress local) {
            return new Route(Action.AUTO, "test: bind auto");
        }

        @Override
        public Route forConnect(InetSocketAddress remote) {
            return new Route(Action.AUTO, "test: connect auto");
        }
    };

    private static final EngineSource LOOPBACK = (peer, listening) -> Engines.get("loopback");

    private SelectorProvider provider = new RdmaSelectorProvider(new RdmanioConfig(AUTO, LOOPBACK, "loopback", null));

    @Override
    protected SelectorProvider provider() {
        return provider;
    }

    private void echoOnce(SocketChannel c, SocketChannel a) throws Exception {
        c.write(ByteBuffer.wrap(new byte[] {9}));
        ByteBuffer one = ByteBuffer.allocate(1);
        readFully(a, one);
        assertTrue(one.get(0) == 9);
    }

    @Test
    void serverListensOnBothAndClientsUseTheFabric() throws Exception {
        ServerSocketChannel server = server();
        assertTrue(server.toString().contains("tcp and loopback"), server.toString());
        SocketChannel c = client();
        c.connect(server.getLocalAddress());
        assertTrue(c.toString().contains("loopback"), c.toString());
        echoOnce(c, track(server.accept()));
        SocketChannel tcp = track(RdmaSelectorProvider.jdkProvider().openSocketChannel());
        tcp.connect(server.getLocalAddress());
        echoOnce(tcp, track(server.accept()));
    }

    @Test
    void withoutAFabricTheServerIsOnTcpAndClientsFollow() throws Exception {
        provider = new RdmaSelectorProvider(new RdmanioConfig(AUTO, (peer, listening) -> {
            throw new IOException("no fabric here");
        }, "auto", null));
        ServerSocketChannel server = server();
        assertTrue(server.toString().contains("tcp") && !server.toString().contains("and"), server.toString());
        SocketChannel c = client();
        c.connect(server.getLocalAddress());
        assertTrue(c.toString().contains("tcp"), c.toString());
        echoOnce(c, track(server.accept()));
    }

    @Test
    void clientTakesTcpWhenThePeerServesNoFabric() throws Exception {
        ServerSocketChannel server = track(RdmaSelectorProvider.jdkProvider().openServerSocketChannel());
        server.bind(new InetSocketAddress(address(), 0));
        SocketChannel c = client();
        c.connect(server.getLocalAddress());
        assertTrue(c.toString().contains("tcp"), c.toString());
        echoOnce(c, track(server.accept()));
    }

    /** A client bound first tries the fabric from its port, and takes TCP from the same port when refused. */
    @Test
    void aBoundClientKeepsItsPortOnEitherTransport() throws Exception {
        ServerSocketChannel tcpOnly = track(RdmaSelectorProvider.jdkProvider().openServerSocketChannel());
        tcpOnly.bind(new InetSocketAddress(address(), 0));
        for (ServerSocketChannel server : new ServerSocketChannel[] {server(), tcpOnly}) {
            SocketChannel c = client();
            c.bind(new InetSocketAddress(address(), 0));
            InetSocketAddress local = (InetSocketAddress) c.getLocalAddress();
            c.connect(server.getLocalAddress());
            assertTrue(c.toString().contains(server == tcpOnly ? "tcp" : "loopback"), c.toString());
            SocketChannel a = track(server.accept());
            assertEquals(local, a.getRemoteAddress());
            assertEquals(local, c.getLocalAddress());
            echoOnce(c, a);
        }
    }
}
