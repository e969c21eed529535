package io.rdmanio.selector.config;

import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.Engines;
import io.rdmanio.core.fabric.FabricProvider;
import io.rdmanio.core.fabric.Fabrics;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.ServiceConfigurationError;

/**
 * The fabrics {@link Fabrics} finds on the class path, and the engines the engine module shares per fabric. A
 * fabric that appears in a later build (disni, shm) is found without a change here.
 */
final class SystemFabrics implements FabricDirectory {

    static final SystemFabrics INSTANCE = new SystemFabrics();

    private static final String PREFIX = "rdmanio.";

    private SystemFabrics() {
    }

    @Override
    public String unavailableReason(String fabricName) {
        return check(fabricName, false);
    }

    @Override
    public String quickUnavailableReason(String fabricName) {
        return check(fabricName, true);
    }

    private static String check(String fabricName, boolean quick) {
        try {
            if (!Fabrics.names().contains(fabricName)) {
                return "the " + fabricName + " fabric is not in this build";
            }
            FabricProvider p = Fabrics.provider(fabricName);
            return quick ? p.quickUnavailableReason(settings()) : p.unavailableReason(settings());
        } catch (IOException | RuntimeException | ServiceConfigurationError e) {
            return "its availability check failed: " + e.getMessage();
        }
    }

    /**
     * The settings a fabric is opened with, as the engine module passes them: every {@code rdmanio.*} system
     * property without the prefix (availability may depend on one, such as the shm directory).
     */
    private static Map<String, String> settings() {
        Map<String, String> settings = new HashMap<>();
        Properties properties = System.getProperties();
        for (String name : properties.stringPropertyNames()) {
            if (name.startsWith(PREFIX)) {
                settings.put(name.substring(PREFIX.length()), properties.getProperty(name));
            }
        }
        return settings;
    }

    @Override
    public Engine engine(String fabricName) throws IOException {
        return Engines.get(fabricName);
    }
}
