package io.rdmanio.selector;

import java.nio.channels.spi.SelectorProvider;

/** The suite against rdmanio with every socket routed to the JDK's TCP: delegation must keep every semantic. */
class TcpRoutedConformanceTest extends AbstractNioConformanceTest {

    private static final SelectorProvider PROVIDER = new RdmaSelectorProvider(TestRouting.allTcp());

    @Override
    protected SelectorProvider provider() {
        return PROVIDER;
    }
}
