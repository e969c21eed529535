package io.rdmanio.selector;

import java.nio.channels.spi.SelectorProvider;

/** The suite against the JDK's own provider: the reference every other provider must match. */
class JdkProviderConformanceTest extends AbstractNioConformanceTest {

    private static final SelectorProvider JDK = RdmaSelectorProvider.jdkProvider();

    @Override
    protected SelectorProvider provider() {
        return JDK;
    }
}
