package io.rdmanio.core.fabric.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.engine.Engines;
import io.rdmanio.core.fabric.Fabrics;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** Availability is an API: on a machine without RDMA the fabric says so, names the check and the fix. */
class DisniAvailabilityTest {

    private static void assumeNoDevice() {
        Assumptions.assumeTrue(DisniDevices.devices().isEmpty(), "this machine has an RDMA device");
    }

    @Test
    void theProviderIsFoundByName() throws IOException {
        assertTrue(Fabrics.names().contains("disni"), Fabrics.names().toString());
        assertEquals("disni", Fabrics.provider("disni").name());
    }

    @Test
    void withoutADeviceTheReasonSaysHowToCheck() {
        assumeNoDevice();
        String reason = new DisniFabricProvider().unavailableReason();
        assertNotNull(reason);
        assertTrue(reason.startsWith("no RDMA device was found"), reason);
        assertTrue(reason.contains("ibv_devices") && reason.contains("rdma link"), reason);
        assertTrue(reason.contains("rdma link add rxe0 type rxe netdev eth0"), reason);
    }

    @Test
    void openingFabricDisniWithoutADeviceFailsNamingTheCause() {
        assumeNoDevice();
        IOException e = assertThrows(IOException.class, () -> Fabrics.open("disni", Map.of()));
        assertTrue(e.getMessage().contains("no RDMA device was found"), e.getMessage());
        assertTrue(e.getMessage().contains("ibv_devices"), e.getMessage());
    }

    @Test
    void connectingWithFabricDisniWithoutADeviceFailsNamingTheCause() {
        assumeNoDevice();
        IOException e = assertThrows(IOException.class, () -> Engines.get("disni"));
        assertTrue(e.getMessage().contains("no RDMA device was found"), e.getMessage());
        assertTrue(e.getMessage().contains("rdma link"), e.getMessage());
    }

    @Test
    void theMemoryLockLimitIsReadFromProcfs() {
        long limit = DisniDevices.memlockLimit();
        assertTrue(limit == Long.MAX_VALUE || limit >= 0, "limit " + limit);
        String problem = DisniDevices.memlockProblem();
        if (problem != null) {
            assertTrue(problem.contains("ulimit -l") && problem.contains("LimitMEMLOCK"), problem);
        }
    }

    @Test
    void aMachineWithoutDevicesHasNoDeviceAddress() {
        assumeNoDevice();
        assertFalse(DisniDevices.deviceAddress() != null);
        assertEquals(-1, DisniDevices.receiverNotReadyNaks("rxe0"));
    }
}
