package io.rdmanio.core.fabric.disni;

import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.FabricProvider;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Map;

/**
 * The {@code disni} fabric: RDMA verbs through DiSNI 2.1 and the project's libdisni, on any verbs device
 * (InfiniBand, RoCE, iWARP, soft-RoCE).
 *
 * <p>Unavailable, with the cause and the fix, when the machine has no RDMA device, the locked-memory limit is too
 * low to register memory, or libdisni cannot be loaded.
 *
 * <p>Settings (keys without the {@code rdmanio.} prefix):
 * <ul>
 *   <li>{@code disni.address}: the local address of the RDMA interface to use (default: the first IPv4 address
 *       of a network interface an RDMA device serves); wildcard listeners bind here;</li>
 *   <li>{@code disni.maxWr} (default 1024): the send and receive queue depth of the queue pairs a listener
 *       creates for incoming connections, the most a server-side connection may ask for;</li>
 *   <li>{@code disni.maxInline} (default 64): the inline data of those queue pairs (at most what the device
 *       takes);</li>
 *   <li>{@code disni.cqEntries} (default 65536): the size of the fabric's device completion queue, lowered to
 *       what the device accepts;</li>
 *   <li>{@code disni.rnrRetry} (0-7, default 3) and {@code disni.retryCount} (0-7, default 7): the transport's
 *       receiver-not-ready and timeout retry counts, a guard only: the protocol never sends without a posted
 *       receive;</li>
 *   <li>{@code disni.timeoutMillis} (default 2000): address and route resolution timeout.</li>
 * </ul>
 * The library itself is found as {@link DisniRuntime} describes ({@code -Drdmanio.disni.library=PATH}).
 */
public final class DisniFabricProvider implements FabricProvider {

    public static final String NAME = "disni";
    public static final String ADDRESS = "disni.address";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String unavailableReason() {
        if (DisniDevices.devices().isEmpty()) {
            return DisniDevices.NO_DEVICE;
        }
        String memlock = DisniDevices.memlockProblem();
        if (memlock != null) {
            return memlock;
        }
        return DisniRuntime.failure();
    }

    @Override
    public String quickUnavailableReason(Map<String, String> settings) {
        return DisniDevices.devices().isEmpty() ? DisniDevices.NO_DEVICE : DisniDevices.memlockProblem();
    }

    @Override
    public InetAddress reachableAddress(InetAddress bound) {
        if (bound == null || bound.isAnyLocalAddress()) {
            InetAddress device = DisniDevices.deviceAddress();
            return device != null ? device : bound;
        }
        return bound;
    }

    /** Devices, ports, link state, GIDs, the locked-memory limit, rdma-core's packages and libdisni. */
    @Override
    public int report(PrintStream out) {
        return DisniReport.system().print(out);
    }

    /**
     * Why libdisni (with DiSNI) cannot be loaded in this JVM, {@code null} when it loads; independent of whether an
     * RDMA device exists, for {@code doctor}.
     */
    public static String libraryProblem() {
        return DisniRuntime.failure();
    }

    @Override
    public Fabric open(Map<String, String> settings) throws IOException {
        Map<String, String> s = settings == null ? Map.of() : settings;
        String reason = unavailableReason();
        if (reason != null) {
            throw new IOException("fabric 'disni' is unavailable: " + reason);
        }
        InetAddress address = deviceAddress(s);
        return new DisniFabric(DisniRuntime.backend().open(address, s));
    }

    static InetAddress deviceAddress(Map<String, String> settings) throws IOException {
        String configured = settings.get(ADDRESS);
        if (configured != null && !configured.isBlank()) {
            try {
                return InetAddress.getByName(configured.trim());
            } catch (UnknownHostException e) {
                throw new IOException("rdmanio." + ADDRESS + " is not an address: '" + configured + "'", e);
            }
        }
        InetAddress a = DisniDevices.deviceAddress();
        if (a == null) {
            throw new IOException("the RDMA device(s) " + DisniDevices.devices() + " have no network interface with "
                + "an address: give the RDMA interface an IP address (RoCE/iWARP: its Ethernet interface; "
                + "InfiniBand: its ib0 IPoIB interface) or set -Drdmanio." + ADDRESS);
        }
        return a;
    }
}
