package io.rdmanio.core;

import java.lang.reflect.Method;
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

    /**
     * The slot of the JDK's system shutdown hooks that rdmanio's exit hook takes: after slot 1, which runs every
     * application shutdown hook (and waits for them all), and slot 2, {@code File.deleteOnExit}.
     */
    private static final int LATE_SHUTDOWN_SLOT = 7;

    /**
     * Registers {@code hook} to run at JVM exit after every application shutdown hook has finished, as the kernel
     * closes a process's sockets only once the process is done: a hook of the application may still be using its
     * connections. Needs {@code jdk.internal.access} exported to this class's module (the agent exports it;
     * otherwise {@code --add-exports java.base/jdk.internal.access=ALL-UNNAMED}).
     *
     * @return whether the hook was registered; {@code false}: the caller registers an ordinary shutdown hook
     */
    public static boolean registerLateShutdownHook(Runnable hook) {
        try {
            Class<?> secrets = Class.forName("jdk.internal.access.SharedSecrets");
            Object access = secrets.getMethod("getJavaLangAccess").invoke(null);
            Method register = Class.forName("jdk.internal.access.JavaLangAccess")
                .getMethod("registerShutdownHook", int.class, boolean.class, Runnable.class);
            register.invoke(access, LATE_SHUTDOWN_SLOT, false, hook);
            return true;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            // Not exported, a JDK without that interface, the slot taken, or the JVM already exiting.
            return false;
        }
    }
}
