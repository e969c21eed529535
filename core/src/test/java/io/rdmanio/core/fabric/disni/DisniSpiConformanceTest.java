package io.rdmanio.core.fabric.disni;

import static io.rdmanio.core.fabric.Completions.LOC_LEN_ERR;
import static io.rdmanio.core.fabric.Completions.LOC_PROT_ERR;
import static io.rdmanio.core.fabric.Completions.LOC_QP_OP_ERR;
import static io.rdmanio.core.fabric.Completions.REM_ACCESS_ERR;
import static io.rdmanio.core.fabric.Completions.REM_INV_REQ_ERR;
import static io.rdmanio.core.fabric.Completions.REM_OP_ERR;

import io.rdmanio.core.fabric.AbstractFabricConformanceTest;
import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.Fabrics;
import java.io.IOException;
import java.net.InetAddress;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;

/**
 * The fabric conformance suite on the disni fabric, over a real verbs device (soft-RoCE in the test VM): two fabric
 * instances of this JVM, each with its own device context and protection domain. Skipped where no RDMA device
 * exists, with the provider's reason.
 */
class DisniSpiConformanceTest extends AbstractFabricConformanceTest {

    private static InetAddress address;

    @BeforeAll
    static void assumeDevice() throws IOException {
        Rdma.assumeDevice();
        try (DisniFabric fabric = (DisniFabric) Fabrics.open("disni", Map.of())) {
            address = fabric.deviceAddress();
        }
    }

    @Override
    protected Fabric open() throws IOException {
        return Fabrics.open("disni", Map.of());
    }

    @Override
    protected InetAddress listenAddress() {
        return address;
    }

    @Override
    protected long receiverNotReadyCount(Fabric fabric) {
        return ((DisniFabric) fabric).receiverNotReadyCount();
    }

    /** The device's error completion ends the connection through rdma_disconnect; the CM event says only that. */
    @Override
    protected boolean disconnectNamesTheFailure() {
        return false;
    }

    /** The device NAKs the requester (after its RNR retries, for a missing receive); the peer sees a disconnect. */
    @Override
    protected boolean peerLearnsTheFailure() {
        return false;
    }

    /**
     * What soft-RoCE reports in the place of the SPI's status, passed on unchanged by the fabric (seen in the VM): an
     * lkey that names no valid region of the protection domain (another fabric's, a deregistered one) is a local
     * queue-pair operation error, and so is a message larger than the receive at the responder; the responder's NAK
     * for that message may surface at the requester as any remote error (as DisniFabricTest allows).
     */
    @Override
    protected Set<Integer> statusesFor(int expected) {
        switch (expected) {
            case LOC_PROT_ERR:
            case LOC_LEN_ERR:
                return Set.of(expected, LOC_QP_OP_ERR);
            case REM_INV_REQ_ERR:
                return Set.of(REM_ACCESS_ERR, REM_INV_REQ_ERR, REM_OP_ERR);
            default:
                return Set.of(expected);
        }
    }
}
