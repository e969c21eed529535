package io.rdmanio.core.engine;

import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.Fabrics;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The JVM's engines: one per fabric name, opened on first use with the {@code rdmanio.*} system properties
 * ({@link EngineConfig#fromSystemProperties(int)} with the fabric's preferred slot size, and every {@code rdmanio.} property passed to the fabric without
 * its prefix).
 *
 * <p>Thread-safe: opening is serialized by the class lock; an engine once open is returned without locking
 * beyond that.
 */
public final class Engines {

    private static final String PREFIX = "rdmanio.";

    // ---- guarded by Engines.class
    private static final Map<String, FabricEngine> ENGINES = new HashMap<>();

    private Engines() {
    }

    /**
     * Blocks the calling thread for good once the JVM is past its application's shutdown hooks and the exit hook is
     * closing the engines (the JVM halts next); returns at once otherwise. A channel layer calls it where a thread
     * woken by that close would otherwise see an end of stream or a closed channel that TCP never shows at exit.
     */
    public static void blockWhileHalting() {
        ExitLinger.blockUntilHalt();
    }

    /**
     * The engine of the fabric {@code fabricName}, opening the fabric and the engine if this is the first use
     * (or the previous engine was closed).
     *
     * @throws IOException if the fabric is unknown or unavailable here (the message says why)
     */
    public static synchronized Engine get(String fabricName) throws IOException {
        FabricEngine e = ENGINES.get(fabricName);
        if (e != null && !e.isClosed()) {
            return e;
        }
        Fabric fabric = Fabrics.open(fabricName, fabricSettings());
        try {
            int preferred = fabric.preferredSlotSize();
            EngineConfig config = EngineConfig.fromSystemProperties(
                preferred > 0 ? preferred : EngineConfig.DEFAULT_SLOT_SIZE);
            e = new FabricEngine(fabric, true, config);
        } catch (IOException | RuntimeException ex) {
            fabric.close();
            throw ex;
        }
        ENGINES.put(fabricName, e);
        // The exit hook closes it after the application's hooks: its listeners and fabric threads go too.
        ExitLinger.watch(e);
        return e;
    }

    /**
     * A new engine over {@code fabric}, outside the registry (for tests and embedders). Closing the engine does
     * not close the fabric.
     */
    public static Engine open(Fabric fabric, EngineConfig config) throws IOException {
        return new FabricEngine(fabric, false, config);
    }

    private static Map<String, String> fabricSettings() {
        Map<String, String> settings = new HashMap<>();
        Properties p = System.getProperties();
        for (String name : p.stringPropertyNames()) {
            if (name.startsWith(PREFIX)) {
                settings.put(name.substring(PREFIX.length()), p.getProperty(name));
            }
        }
        return settings;
    }
}
