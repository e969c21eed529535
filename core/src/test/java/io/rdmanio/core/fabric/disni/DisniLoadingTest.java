package io.rdmanio.core.fabric.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.Fabric;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the fabric finds libdisni without java.library.path: a library packed into the jar is extracted, and DiSNI's
 * own {@code System.loadLibrary("disni")} reaches it through the fabric's class loader.
 */
class DisniLoadingTest {

    /** The library this build produced (core's tests run in core/). */
    private static final Path BUILT = Path.of("..", "native", "target", "native", "linux-x86_64", "libdisni.so");

    @Test
    void aPackedLibraryIsExtractedToAPrivateFile(@TempDir Path dir) throws Exception {
        Path packed = dir.resolve(DisniRuntime.resourceName());
        Files.createDirectories(packed.getParent());
        byte[] bytes = {0x7f, 'E', 'L', 'F', 1, 2, 3};
        Files.write(packed, bytes);
        try (URLClassLoader jar = new URLClassLoader(new URL[] {dir.toUri().toURL()}, null)) {
            Path extracted = DisniRuntime.findLibrary(jar);
            assertNotNull(extracted);
            assertNotEquals(packed.toAbsolutePath(), extracted.toAbsolutePath());
            assertEquals("libdisni.so", extracted.getFileName().toString());
            assertArrayEquals(bytes, Files.readAllBytes(extracted));
        }
    }

    @Test
    void withoutAPackedLibraryTheSearchIsLeftToJavaLibraryPath(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(System.getProperty(DisniRuntime.LIBRARY_PROPERTY) == null);
        try (URLClassLoader empty = new URLClassLoader(new URL[] {dir.toUri().toURL()}, null)) {
            assertNull(DisniRuntime.findLibrary(empty));
        }
        assertNull(new DisniClassLoader(getClass().getClassLoader(), null).findLibrary("disni"));
    }

    @Test
    void diSniAndTheVerbsSideAreDefinedByTheFabricLoaderAndTheSpiIsShared(@TempDir Path dir) throws Exception {
        DisniClassLoader loader = new DisniClassLoader(getClass().getClassLoader(), dir.resolve("libdisni.so"));
        Class<?> cmId = Class.forName("com.ibm.disni.verbs.RdmaCmId", false, loader);
        assertSame(loader, cmId.getClassLoader());
        Class<?> backend = Class.forName(DisniRuntime.BACKEND_CLASS, false, loader);
        assertSame(loader, backend.getClassLoader());
        assertSame(Fabric.class, Class.forName(Fabric.class.getName(), false, loader));
        assertSame(DisniBackend.class, Class.forName(DisniBackend.class.getName(), false, loader));
        assertEquals(dir.resolve("libdisni.so").toAbsolutePath().toString(), loader.findLibrary("disni"));
        assertNull(loader.findLibrary("other"));
    }

    /** DiSNI's static initializer calls System.loadLibrary("disni"): through this loader it finds the file. */
    @Test
    void diSniLoadsTheLibraryThroughTheFabricLoader(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(Files.isRegularFile(BUILT), "libdisni is not built (mvn -pl native compile)");
        // A JNI library binds to one class loader per file: this test loads its own copy.
        Path copy = dir.resolve("libdisni.so");
        Files.copy(BUILT, copy, StandardCopyOption.REPLACE_EXISTING);
        DisniClassLoader loader = new DisniClassLoader(getClass().getClassLoader(), copy);
        Class<?> dispatcher = Class.forName("com.ibm.disni.verbs.impl.NativeDispatcher", true, loader);
        assertSame(loader, dispatcher.getClassLoader());
    }

    @Test
    void aLibraryThatCannotLoadIsReportedWithWhatToInstall(@TempDir Path dir) throws Exception {
        Path missing = dir.resolve("libdisni.so");
        DisniClassLoader loader = new DisniClassLoader(getClass().getClassLoader(), missing);
        Throwable t = assertThrows(Throwable.class,
            () -> Class.forName("com.ibm.disni.verbs.impl.NativeDispatcher", true, loader));
        String reason = DisniRuntime.describe(t);
        assertTrue(reason.startsWith("libdisni could not be loaded"), reason);
        assertTrue(reason.contains("apt-get install libibverbs1 librdmacm1 rdma-core"), reason);
        assertTrue(reason.contains("-D" + DisniRuntime.LIBRARY_PROPERTY), reason);
    }

    @org.junit.jupiter.api.Test
    void thePackedLibraryIsLookedUpUnderTheFolderTheBuildWrites() {
        // native/pom.xml writes linux-x86_64 (os.arch amd64) and, on 64-bit ARM, linux-aarch64.
        org.junit.jupiter.api.Assertions.assertEquals("META-INF/native/linux-x86_64/libdisni.so",
            DisniRuntime.resourceName("amd64"));
        org.junit.jupiter.api.Assertions.assertEquals("META-INF/native/linux-aarch64/libdisni.so",
            DisniRuntime.resourceName("aarch64"));
    }

    @org.junit.jupiter.api.Test
    void anExtractionLeavesNoFolderBehindAtExit() throws Exception {
        // The folder is registered for deletion first, so the JDK, deleting in reverse order, removes the file and
        // then the empty folder: checked in a child JVM that extracts the packed library and exits.
        Path lib = Files.createTempDirectory("disni-pack-");
        Path packed = lib.resolve(DisniRuntime.resourceName());
        Files.createDirectories(packed.getParent());
        Files.write(packed, new byte[] {1, 2, 3});
        Path tmp = Files.createTempDirectory("disni-tmp-");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Djava.io.tmpdir=" + tmp, "-cp", System.getProperty("java.class.path") + java.io.File.pathSeparator + lib,
            ExtractOnce.class.getName()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        org.junit.jupiter.api.Assertions.assertEquals(0, p.waitFor(), out);
        org.junit.jupiter.api.Assertions.assertTrue(out.contains("EXTRACTED " + tmp), out);
        try (java.util.stream.Stream<Path> left = Files.list(tmp)) {
            org.junit.jupiter.api.Assertions.assertEquals(java.util.List.of(), left.collect(
                java.util.stream.Collectors.toList()), "nothing left in the temporary directory after exit");
        }
    }

    /** Extracts the packed library as the disni fabric does, and exits. */
    public static final class ExtractOnce {
        private ExtractOnce() {
        }

        public static void main(String[] args) throws Exception {
            System.out.println("EXTRACTED " + DisniRuntime.findLibrary(ExtractOnce.class.getClassLoader()));
        }
    }

    @org.junit.jupiter.api.Test
    void loadingDisniWithoutAnSlf4jProviderWritesNothingToStderr() throws Exception {
        // DiSNI asks SLF4J for a logger as it loads; a program without an SLF4J provider must not get SLF4J's
        // "No SLF4J providers were found" notice from it. The child's class path is this one without slf4j-simple.
        StringBuilder cp = new StringBuilder();
        for (String e : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            if (!Path.of(e).getFileName().toString().startsWith("slf4j-simple")) {
                cp.append(cp.length() == 0 ? "" : java.io.File.pathSeparator).append(e);
            }
        }
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            // Native access enabled: on JDK 24+ loading libdisni without it prints the JDK's own warning (documented
            // in docs/rdma-cluster.md), which is not what this checks.
            "--enable-native-access=ALL-UNNAMED", "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
            "-cp", cp.toString(), LoadOnce.class.getName())
            .redirectError(ProcessBuilder.Redirect.PIPE).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        org.junit.jupiter.api.Assertions.assertEquals(0, p.waitFor(), out + err);
        org.junit.jupiter.api.Assertions.assertTrue(out.startsWith("FAILURE "), out);
        org.junit.jupiter.api.Assertions.assertEquals("", err, "stderr of a JVM that loaded DiSNI without a provider");
    }

    /** Tries to load DiSNI as the disni fabric does (libdisni is missing), and says why it failed. */
    public static final class LoadOnce {
        private LoadOnce() {
        }

        public static void main(String[] args) {
            System.out.println("FAILURE " + DisniRuntime.failure());
        }
    }
}
