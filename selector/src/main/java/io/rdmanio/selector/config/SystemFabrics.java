package io.rdmanio.selector.config;

import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.fabric.FabricProvider;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * The fabrics found on the class path through {@link FabricProvider} services, and the engines the engine module
 * shares per fabric. A fabric that appears in a later build (disni, shm) is found without a change here.
 */
final class SystemFabrics implements FabricDirectory {

    static final SystemFabrics INSTANCE = new SystemFabrics();

    private SystemFabrics() {
    }

    @Override
    public String unavailableReason(String fabricName) {
        FabricProvider provider;
        try {
            provider = findProvider(fabricName);
        } catch (ServiceConfigurationError e) {
            return "its provider failed to load: " + e.getMessage();
        }
        if (provider == null) {
            return "the " + fabricName + " fabric is not in this build";
        }
        try {
            return provider.unavailableReason();
        } catch (RuntimeException | LinkageError e) {
            return "its availability check failed: " + e;
        }
    }

    @Override
    public Engine engine(String fabricName) throws IOException {
        try {
            Class<?> engines = Class.forName("io.rdmanio.core.engine.Engines");
            return (Engine) engines.getMethod("get", String.class).invoke(null, fabricName);
        } catch (ClassNotFoundException | NoSuchMethodException | IllegalAccessException e) {
            throw new IOException("the connection engine is not in this build", e);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException) {
                throw (IOException) cause;
            }
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            throw new IOException("the " + fabricName + " engine failed to open: " + cause, cause);
        }
    }

    private static FabricProvider findProvider(String fabricName) {
        for (FabricProvider provider : ServiceLoader.load(FabricProvider.class, SystemFabrics.class.getClassLoader())) {
            if (provider.name().equals(fabricName)) {
                return provider;
            }
        }
        return null;
    }
}
