package io.rdmanio.core;

import java.util.function.Consumer;

/**
 * Opening JDK internals to class loaders a fabric creates after start. DiSNI reads direct-buffer addresses
 * through {@code sun.nio.ch}; the disni fabric loads DiSNI in a class loader of its own (so that libdisni is found
 * inside the agent jar), whose unnamed module does not exist when the JVM starts. The agent, which may open
 * {@code java.base}, installs an exporter here; a fabric calls {@link #exportSunNioCh(Module)} for its loader's
 * module. Without an agent, {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED} does the same for all.
 *
 * <p>Thread-safe.
 */
public final class JdkAccess {

    private static volatile Consumer<Module> exporter;

    private JdkAccess() {
    }

    /** Installed once by the agent at start. */
    public static void exporter(Consumer<Module> e) {
        exporter = e;
    }

    /** Exports {@code sun.nio.ch} to {@code module} if an exporter is installed; whether it did. */
    public static boolean exportSunNioCh(Module module) {
        Consumer<Module> e = exporter;
        if (e == null) {
            return false;
        }
        e.accept(module);
        return true;
    }
}
