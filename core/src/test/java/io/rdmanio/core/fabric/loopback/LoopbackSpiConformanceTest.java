package io.rdmanio.core.fabric.loopback;

import io.rdmanio.core.fabric.AbstractFabricConformanceTest;
import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.Fabrics;
import java.io.IOException;
import java.net.InetAddress;
import java.util.Map;

/** The fabric conformance suite on the loopback fabric: two fabric instances of this JVM, one namespace. */
class LoopbackSpiConformanceTest extends AbstractFabricConformanceTest {

    @Override
    protected Fabric open() throws IOException {
        return Fabrics.open("loopback", Map.of());
    }

    @Override
    protected InetAddress listenAddress() {
        return InetAddress.getLoopbackAddress();
    }

    @Override
    protected long receiverNotReadyCount(Fabric fabric) {
        return ((LoopbackFabric) fabric).receiverNotReadyCount();
    }
}
