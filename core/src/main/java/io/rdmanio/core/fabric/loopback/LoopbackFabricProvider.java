package io.rdmanio.core.fabric.loopback;

import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.FabricProvider;
import java.io.IOException;
import java.util.Map;

/**
 * The {@code loopback} fabric: always available.
 *
 * <p>Settings: {@code loopback.seed} (a long, default {@value #DEFAULT_SEED}) seeds the fault injector.
 */
public final class LoopbackFabricProvider implements FabricProvider {

    public static final String NAME = "loopback";
    public static final String SEED = "loopback.seed";
    public static final long DEFAULT_SEED = 1L;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String unavailableReason() {
        return null;
    }

    @Override
    public Fabric open(Map<String, String> settings) throws IOException {
        String seed = settings == null ? null : settings.get(SEED);
        long value = DEFAULT_SEED;
        if (seed != null) {
            try {
                value = Long.parseLong(seed.trim());
            } catch (NumberFormatException e) {
                throw new IOException("rdmanio." + SEED + " must be a whole number: '" + seed + "'", e);
            }
        }
        return new LoopbackFabric(value);
    }
}
