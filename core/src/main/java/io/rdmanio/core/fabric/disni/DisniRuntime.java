package io.rdmanio.core.fabric.disni;

import io.rdmanio.core.JdkAccess;
import io.rdmanio.core.Logs;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import org.slf4j.Logger;

/**
 * Loads libdisni once per JVM and hands out the DiSNI-facing backend.
 *
 * <p>Where the library comes from, first match wins:
 * <ol>
 *   <li>{@code -Drdmanio.disni.library=PATH}: that file;</li>
 *   <li>the resource {@code META-INF/native/linux-ARCH/libdisni.so} packed into the jar: extracted into a private
 *       temporary directory (removed at exit);</li>
 *   <li>{@code java.library.path}, as DiSNI itself would search it.</li>
 * </ol>
 * The chosen file reaches DiSNI through {@link DisniClassLoader#findLibrary}. A JNI library binds to one class
 * loader, so the loader and the outcome (backend or failure) are kept for the life of the JVM.
 *
 * <p>Thread-safe.
 */
final class DisniRuntime {

    /** System property naming the library file explicitly. */
    static final String LIBRARY_PROPERTY = "rdmanio.disni.library";
    static final String BACKEND_CLASS = "io.rdmanio.core.fabric.disni.verbs.VerbsBackend";
    static final String INSTALL_HINT = "build it with `mvn -pl native compile` (or native/build.sh) and pass "
        + "-D" + LIBRARY_PROPERTY + "=native/target/native/linux-x86_64/libdisni.so, or use the agent jar that packs "
        + "it; it needs rdma-core's libraries (Debian/Ubuntu: `apt-get install libibverbs1 librdmacm1 rdma-core`, "
        + "RHEL: `dnf install rdma-core libibverbs librdmacm`)";

    private static final Logger LOG = Logs.get(DisniRuntime.class);

    // ---- guarded by DisniRuntime.class
    private static boolean attempted;
    private static DisniBackend backend;
    private static String failure;

    private DisniRuntime() {
    }

    /** The resource path of the packed library for this platform. */
    static String resourceName() {
        return resourceName(System.getProperty("os.arch", ""));
    }

    /** As the build names the folder: the processor's own name (x86_64, aarch64), not the JDK's amd64. */
    static String resourceName(String osArch) {
        String arch = osArch.toLowerCase(Locale.ROOT);
        if (arch.equals("amd64") || arch.equals("x86_64")) {
            arch = "x86_64";
        } else if (arch.equals("arm64")) {
            arch = "aarch64";
        }
        return "META-INF/native/linux-" + arch + "/libdisni.so";
    }

    /** The backend, or {@code null} when libdisni cannot be loaded here (then {@link #failure()} says why). */
    static synchronized DisniBackend backend() {
        if (!attempted) {
            attempted = true;
            try {
                backend = implLoad();
            } catch (Throwable t) {
                failure = describe(t);
                LOG.debug("the disni fabric cannot load libdisni: {}", failure, t);
            }
        }
        return backend;
    }

    /** Why {@link #backend()} is {@code null}; {@code null} when it is not. */
    static synchronized String failure() {
        backend();
        return failure;
    }

    private static DisniBackend implLoad() throws Throwable {
        ClassLoader parent = DisniRuntime.class.getClassLoader();
        if (DisniClassLoader.classBytes(parent, "com/ibm/disni/verbs/RdmaCmId.class") == null) {
            throw new ClassNotFoundException("DiSNI 2.1 (com.ibm.disni:disni:2.1) is not on the class path");
        }
        Path library = findLibrary(parent);
        // DiSNI asks SLF4J for its logger: no notice on stderr where the application has no SLF4J provider.
        Logs.bindQuietly();
        ClassLoader loader = new DisniClassLoader(parent, library);
        // With the agent, DiSNI's loader gets sun.nio.ch without --add-exports.
        JdkAccess.exportSunNioCh(loader.getUnnamedModule());
        DisniBackend b = (DisniBackend) Class.forName(BACKEND_CLASS, true, loader).getDeclaredConstructor()
            .newInstance();
        b.load();
        LOG.debug("libdisni loaded from {}", library == null ? "java.library.path" : library);
        return b;
    }

    /** The library file to hand DiSNI, or {@code null} to leave the search to {@code java.library.path}. */
    static Path findLibrary(ClassLoader parent) throws IOException {
        String explicit = System.getProperty(LIBRARY_PROPERTY);
        if (explicit != null && !explicit.isBlank()) {
            Path p = Path.of(explicit.trim());
            if (!Files.isRegularFile(p)) {
                throw new IOException("-D" + LIBRARY_PROPERTY + " names " + p + ", which is not a file");
            }
            return p;
        }
        String resource = resourceName();
        try (InputStream in = parent.getResourceAsStream(resource)) {
            if (in == null) {
                return null;
            }
            Path dir = Files.createTempDirectory("rdmanio-disni-");
            Path file = dir.resolve("libdisni.so");
            // The JDK deletes on exit in the reverse order of these calls: the file, then its (then empty) folder.
            dir.toFile().deleteOnExit();
            file.toFile().deleteOnExit();
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            return file;
        }
    }

    /** A sentence naming why loading failed and what to install or pass. */
    static String describe(Throwable t) {
        Throwable cause = t;
        while ((cause instanceof ExceptionInInitializerError || cause instanceof java.lang.reflect
            .InvocationTargetException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof ClassNotFoundException && cause.getMessage() != null
            && cause.getMessage().startsWith("DiSNI")) {
            return cause.getMessage() + "; add it (the agent jar carries it)";
        }
        if (cause instanceof UnsatisfiedLinkError || cause instanceof NoClassDefFoundError) {
            return "libdisni could not be loaded (" + cause.getMessage() + "): " + INSTALL_HINT;
        }
        return "libdisni could not be initialised (" + cause + "): " + INSTALL_HINT;
    }
}
