package io.rdmanio.core.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FabricsTest {

    @Test
    void loopbackIsFoundAndAvailable() throws IOException {
        assertTrue(Fabrics.names().contains("loopback"), Fabrics.names().toString());
        FabricProvider provider = Fabrics.provider("loopback");
        assertEquals("loopback", provider.name());
        assertEquals(null, provider.unavailableReason());
        try (Fabric fabric = Fabrics.open("loopback", Map.of())) {
            assertEquals("loopback", fabric.name());
        }
    }

    @Test
    void unknownNameListsTheKnownOnes() {
        IOException e = assertThrows(IOException.class, () -> Fabrics.provider("infiniband-over-carrier-pigeon"));
        assertTrue(e.getMessage().contains("infiniband-over-carrier-pigeon"), e.getMessage());
        assertTrue(e.getMessage().contains("loopback"), e.getMessage());
        assertThrows(IOException.class, () -> Fabrics.open("nope", Map.of()));
    }

    @Test
    void badSeedSettingIsNamed() {
        IOException e = assertThrows(IOException.class, () -> Fabrics.open("loopback", Map.of("loopback.seed", "x")));
        assertTrue(e.getMessage().contains("loopback.seed"), e.getMessage());
    }
}
