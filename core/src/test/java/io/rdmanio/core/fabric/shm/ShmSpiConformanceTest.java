package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.fabric.AbstractFabricConformanceTest;
import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.Fabrics;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The fabric conformance suite on the shm fabric: two fabric instances of this JVM on one private shm directory,
 * reaching each other through its rendezvous sockets and shared files as two processes do.
 */
class ShmSpiConformanceTest extends AbstractFabricConformanceTest {

    private static Path dir;

    @BeforeAll
    static void createDirectory() throws IOException {
        dir = ShmTestSupport.newDirectory();
    }

    @AfterAll
    static void deleteDirectory() throws IOException {
        ShmTestSupport.deleteDirectory(dir);
    }

    @Override
    protected Fabric open() throws IOException {
        return Fabrics.open("shm", Map.of(ShmFabricProvider.DIR, dir.toString()));
    }

    @Override
    protected InetAddress listenAddress() {
        return InetAddress.getLoopbackAddress();
    }

    @Override
    protected long receiverNotReadyCount(Fabric fabric) {
        return ((ShmFabric) fabric).receiverNotReadyCount();
    }
}
