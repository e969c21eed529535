package io.rdmanio.selector;

import java.nio.channels.spi.SelectorProvider;

/**
 * The suite against rdmanio with every loopback socket on a fabric, here an in-memory engine that keeps the
 * engine contract (bounded buffers, handshakes finished by progress, arm and notify): the fabric half of the
 * channels and the selector are checked against the same expectations as the JDK's TCP.
 */
class InMemoryFabricConformanceTest extends AbstractNioConformanceTest {

    private static final InMemoryEngine ENGINE = new InMemoryEngine();
    private static final SelectorProvider PROVIDER = new RdmaSelectorProvider(
            TestRouting.fabricFor(a -> a.getAddress().isLoopbackAddress(), (peer, listening) -> ENGINE, "memory"));

    @Override
    protected SelectorProvider provider() {
        return PROVIDER;
    }

    @Override
    protected boolean serversOnTcp() {
        return false;
    }
}
