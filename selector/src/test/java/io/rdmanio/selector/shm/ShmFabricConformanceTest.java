package io.rdmanio.selector.shm;

import io.rdmanio.selector.AbstractNioConformanceTest;
import java.io.IOException;
import java.nio.channels.spi.SelectorProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole NIO conformance suite with every loopback socket carried by the engine on the {@code shm} fabric,
 * in one JVM (an shm listener accepts connections from its own process as from any other), in a private shm
 * directory.
 */
class ShmFabricConformanceTest extends AbstractNioConformanceTest {

    private static ShmNio shm;

    @BeforeAll
    static void openFabric() throws IOException {
        shm = ShmNio.open();
    }

    @AfterAll
    static void closeFabric() throws IOException {
        if (shm != null) {
            shm.close();
        }
    }

    @Override
    protected SelectorProvider provider() {
        return shm.provider;
    }

    @Override
    protected boolean serversOnTcp() {
        return false;
    }
}
