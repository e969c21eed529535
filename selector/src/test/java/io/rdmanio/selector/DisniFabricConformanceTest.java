package io.rdmanio.selector;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmanio.core.engine.Engines;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.fabric.disni.DisniDevices;
import io.rdmanio.core.fabric.disni.DisniFabricProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.channels.spi.SelectorProvider;
import org.junit.jupiter.api.BeforeAll;

/**
 * The suite against rdmanio with every socket on the RDMA interface's address carried by the engine on the
 * {@code disni} fabric: real verbs, so it runs where an RDMA device exists (the soft-RoCE VM,
 * {@code native/vm/test-conformance.sh}) and is skipped, with the fabric's own reason, everywhere else.
 *
 * <p>The address is {@code RDMANIO_TEST_RDMA_ADDRESS} when set, else the address of the network interface behind
 * the first RDMA device (what the fabric itself binds to).
 */
class DisniFabricConformanceTest extends AbstractNioConformanceTest {

    static final String ADDRESS_ENV = "RDMANIO_TEST_RDMA_ADDRESS";

    private static InetAddress rdmaAddress;
    private static SelectorProvider provider;

    @BeforeAll
    static void ensureDisniFabric() throws IOException {
        rdmaAddress = rdmaAddressOrSkip();
        provider = providerOn(rdmaAddress);
    }

    /**
     * The address the disni tests use ({@value #ADDRESS_ENV}, else the RDMA device's interface); skips the test
     * class when the fabric or an address is missing.
     */
    static InetAddress rdmaAddressOrSkip() throws IOException {
        String reason = Fabrics.provider(DisniFabricProvider.NAME).unavailableReason();
        assumeTrue(reason == null, () -> "the disni fabric is unavailable here: " + reason);
        String configured = System.getenv(ADDRESS_ENV);
        InetAddress address = configured != null && !configured.isBlank()
            ? InetAddress.getByName(configured.trim()) : DisniDevices.deviceAddress();
        assumeTrue(address != null, () -> "the RDMA device(s) " + DisniDevices.devices()
            + " have no addressed network interface, and " + ADDRESS_ENV + " is not set");
        if (configured != null && !configured.isBlank()) {
            // The fabric binds its connection-manager ids to the same address the suite uses.
            System.setProperty("rdmanio." + DisniFabricProvider.ADDRESS, address.getHostAddress());
        }
        return address;
    }

    /** rdmanio's provider with every socket on {@code onFabric} routed to the JVM's disni engine. */
    static SelectorProvider providerOn(InetAddress onFabric) {
        return new RdmaSelectorProvider(TestRouting.fabricFor(a -> onFabric.equals(a.getAddress()),
            (peer, listening) -> Engines.get(DisniFabricProvider.NAME), DisniFabricProvider.NAME));
    }

    @Override
    protected SelectorProvider provider() {
        return provider;
    }

    @Override
    protected InetAddress address() {
        return rdmaAddress;
    }

    @Override
    protected boolean serversOnTcp() {
        return false;
    }
}
