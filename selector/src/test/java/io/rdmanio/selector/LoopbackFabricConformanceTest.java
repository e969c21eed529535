package io.rdmanio.selector;

import io.rdmanio.core.engine.Engines;
import java.nio.channels.spi.SelectorProvider;

/** The suite against rdmanio with every loopback socket carried by the engine on the {@code loopback} fabric. */
class LoopbackFabricConformanceTest extends AbstractNioConformanceTest {

    private static final SelectorProvider PROVIDER = new RdmaSelectorProvider(TestRouting.fabricFor(
            a -> a.getAddress().isLoopbackAddress(), (peer, listening) -> Engines.get("loopback"), "loopback"));

    @Override
    protected SelectorProvider provider() {
        return PROVIDER;
    }

    @Override
    protected boolean serversOnTcp() {
        return false;
    }
}
