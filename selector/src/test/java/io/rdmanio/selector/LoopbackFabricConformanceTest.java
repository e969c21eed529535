package io.rdmanio.selector;

import java.nio.channels.spi.SelectorProvider;
import org.junit.jupiter.api.Disabled;

/** The suite against rdmanio with 127.0.0.1 carried by the engine on the {@code loopback} fabric. */
@Disabled("needs io.rdmanio.core.engine.Engines (the engine implementation), not yet on this branch")
class LoopbackFabricConformanceTest extends AbstractNioConformanceTest {

    @Override
    protected SelectorProvider provider() {
        throw new UnsupportedOperationException("the engine implementation is not on this branch yet");
    }

    @Override
    protected boolean serversOnTcp() {
        return false;
    }
}
