package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.Logs;
import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import org.slf4j.Logger;

/**
 * The shm fabric's sealed memory (librdmanio-shm, built from {@code core/src/main/native} into this jar): a memfd
 * that no process can shrink or grow, and the seals of a descriptor a peer offers.
 *
 * <p>Used when the library loads and {@code rdmanio.shm.sealed} is not {@code false}. It does not load, and the
 * fabric shares plain files, when the jar carries no library for this platform, when {@code rdmanio.shm.sealed=false},
 * or on JDK 24 and later without {@code --enable-native-access=ALL-UNNAMED}: loading the library would make the JDK
 * print a warning on the application's stderr, and the JDK grants native access to unnamed modules only all at once,
 * which is the user's decision, not rdmanio's. {@link #unavailableReason()} says which.
 *
 * <p>The JNI entry points ({@link ShmNativeCalls}) are defined by a private class loader: the library binds to it,
 * not to the loader of the application's class path, whose native libraries it would otherwise join.
 *
 * <p>Thread-safe: loaded once, on first use.
 */
final class ShmNatives {

    /** {@code false} turns sealed memory off (both ends must agree: a sealing side refuses unsealed files). */
    static final String SEALED_PROPERTY = "rdmanio.shm.sealed";

    static final int F_SEAL_SEAL = 0x0001;
    static final int F_SEAL_SHRINK = 0x0002;
    static final int F_SEAL_GROW = 0x0004;

    private static final Logger LOG = Logs.get(ShmNatives.class);
    private static final String LIBRARY = "librdmanio-shm.so";
    private static final String CALLS = "io.rdmanio.core.fabric.shm.ShmNativeCalls";

    /** Set by tests of the plain-file fallback, which run beside the sealed fabric in one JVM. */
    private static volatile boolean offForTests;

    private ShmNatives() {
    }

    /** Whether files are created sealed, and peers' files must be sealed. */
    static boolean available() {
        return !offForTests && Holder.REASON == null;
    }

    /** Why sealed memory is not used here, {@code null} when it is. */
    static String unavailableReason() {
        return Holder.REASON;
    }

    /** Tests only: plain files from now on (this process's new files, and peers' files accepted unsealed). */
    static void offForTests(boolean off) {
        offForTests = off;
    }

    /** A sealed memfd of {@code length} bytes named {@code name} (shown in /proc/PID/maps); its descriptor. */
    static int createSealed(String name, long length) throws IOException {
        return (int) call(Holder.CREATE, name, length);
    }

    /** The seals of descriptor {@code fd}; 0 for a file that cannot carry any. */
    static int seals(int fd) throws IOException {
        return (int) call(Holder.SEALS, fd);
    }

    /** Opens {@code path} read-write; the descriptor. */
    static int open(Path path) throws IOException {
        return (int) call(Holder.OPEN, path.toString());
    }

    static void close(int fd) throws IOException {
        call(Holder.CLOSE, fd);
    }

    /** Opens a peer's wakeup pipe ({@code /proc/PID/fd/FD}) for non-blocking writes; refuses anything but a pipe. */
    static int openPipeWriter(Path path) throws IOException {
        return (int) call(Holder.OPEN_PIPE_WRITER, path.toString());
    }

    /** The descriptor number of a JDK pipe channel. */
    static int fdVal(Object channel) throws IOException {
        return (int) call(Holder.FD_VAL, channel);
    }

    /**
     * Writes one byte into a pipe opened by {@link #openPipeWriter}: 0 when written or already full, else errno. On
     * the data path (a doorbell): an exact invocation, no boxing, no allocation.
     */
    static int ring(int fd) {
        try {
            return (int) Holder.RING.invokeExact(fd);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Calls a native of {@link ShmNativeCalls}; its IOException as thrown. Per shared file, not per message. */
    private static Object call(MethodHandle h, Object... args) throws IOException {
        try {
            return h.invokeWithArguments(args);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException(t);
        }
    }

    /** Loads the library at first use; {@code REASON} is {@code null} when it loaded, and the handles are set. */
    private static final class Holder {
        static MethodHandle CREATE;
        static MethodHandle SEALS;
        static MethodHandle OPEN;
        static MethodHandle CLOSE;
        static MethodHandle OPEN_PIPE_WRITER;
        static MethodHandle RING;
        static MethodHandle FD_VAL;
        static final String REASON = load();

        private static String load() {
            if ("false".equalsIgnoreCase(System.getProperty(SEALED_PROPERTY, "").trim())) {
                return "turned off (-D" + SEALED_PROPERTY + "=false)";
            }
            ClassLoader parent = ShmNatives.class.getClassLoader();
            String resource = "META-INF/native/linux-" + arch() + "/" + LIBRARY;
            try (InputStream lib = parent.getResourceAsStream(resource);
                 InputStream calls = parent.getResourceAsStream(CALLS.replace('.', '/') + ".class")) {
                if (lib == null) {
                    return "this build carries no " + resource + " (built where gcc was missing, or another platform)";
                }
                if (calls == null) {
                    return "the class " + CALLS + " is missing from this build";
                }
                Class<?> c = Class.forName(CALLS, true, new CallsLoader(parent, calls.readAllBytes()));
                String blocked = nativeAccessBlocked(c.getModule());
                if (blocked != null) {
                    return blocked;
                }
                // A private directory (0700), the file loaded, then both removed: the loaded library needs no name.
                Path dir = Files.createTempDirectory("rdmanio-shm-");
                Path file = dir.resolve(LIBRARY);
                try {
                    Files.copy(lib, file, StandardCopyOption.REPLACE_EXISTING);
                    handle(c, "load", String.class).invoke(file.toString());
                } finally {
                    Files.deleteIfExists(file);
                    Files.deleteIfExists(dir);
                }
                CREATE = handle(c, "createSealed0", String.class, long.class);
                SEALS = handle(c, "seals0", int.class);
                OPEN = handle(c, "open0", String.class);
                CLOSE = handle(c, "close0", int.class);
                OPEN_PIPE_WRITER = handle(c, "openPipeWriter0", String.class);
                RING = handle(c, "ring0", int.class);
                FD_VAL = handle(c, "fdVal0", Object.class);
                return null;
            } catch (Throwable e) {
                LOG.debug("the shm fabric shares unsealed files: {} does not load", LIBRARY, e);
                return LIBRARY + " does not load: " + e;
            }
        }

        private static MethodHandle handle(Class<?> c, String name, Class<?>... types) throws ReflectiveOperationException {
            Method m = c.getDeclaredMethod(name, types);
            m.setAccessible(true);
            return MethodHandles.lookup().unreflect(m);
        }

        /** On JDK 24+, loading a JNI library from a module without native access prints a warning: not done. */
        private static String nativeAccessBlocked(Module module) {
            if (Runtime.version().feature() < 24) {
                return null;
            }
            try {
                Method enabled = Module.class.getMethod("isNativeAccessEnabled");
                if (Boolean.TRUE.equals(enabled.invoke(module))) {
                    return null;
                }
                return "native access is not enabled (JDK " + Runtime.version().feature() + " would warn on stderr):"
                    + " run with --enable-native-access=ALL-UNNAMED for sealed shared memory";
            } catch (ReflectiveOperationException | RuntimeException e) {
                return null;
            }
        }

        private static String arch() {
            String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
            return arch.equals("amd64") ? "x86_64" : arch;
        }
    }

    /** Defines {@link ShmNativeCalls} itself (from rdmanio's own class file); everything else from its parent. */
    private static final class CallsLoader extends ClassLoader {
        static {
            registerAsParallelCapable();
        }

        private final byte[] calls;

        CallsLoader(ClassLoader parent, byte[] calls) {
            super("rdmanio-shm-natives", parent);
            this.calls = calls;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.equals(CALLS)) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    c = defineClass(name, calls, 0, calls.length);
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }
}
