package io.rdmanio.core.fabric.disni;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.security.ProtectionDomain;

/**
 * Loads DiSNI and the fabric's DiSNI-facing classes itself, child first, so that DiSNI's
 * {@code System.loadLibrary("disni")} asks this loader's {@link #findLibrary} and finds the library extracted from
 * the jar, whatever {@code java.library.path} says. Everything else (the fabric SPI, this package, SLF4J) comes
 * from the parent, so objects cross between the two sides through the SPI's interfaces.
 *
 * <p>Class bytes are read from the parent's resources, so the same jar or class directory serves both loaders.
 * When no library was extracted, {@link #findLibrary} returns {@code null} and the JVM searches
 * {@code java.library.path} as usual.
 *
 * <p>Thread-safe (parallel capable).
 */
final class DisniClassLoader extends ClassLoader {

    /** Packages defined here rather than by the parent. */
    private static final String[] OWN = {"com.ibm.disni.", "io.rdmanio.core.fabric.disni.verbs."};

    static {
        registerAsParallelCapable();
    }

    private final Path library;
    private final ProtectionDomain domain;

    /**
     * @param parent  the loader that sees DiSNI's jar and the fabric's classes
     * @param library the extracted libdisni, or {@code null} to search {@code java.library.path}
     */
    DisniClassLoader(ClassLoader parent, Path library) {
        super("rdmanio-disni", parent);
        this.library = library;
        this.domain = DisniClassLoader.class.getProtectionDomain();
    }

    private static boolean isOwn(String name) {
        for (String prefix : OWN) {
            if (name.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (!isOwn(name)) {
            return super.loadClass(name, resolve);
        }
        synchronized (getClassLoadingLock(name)) {
            Class<?> c = findLoadedClass(name);
            if (c == null) {
                c = findClass(name);
            }
            if (resolve) {
                resolveClass(c);
            }
            return c;
        }
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
        String resource = name.replace('.', '/') + ".class";
        try (InputStream in = getParent().getResourceAsStream(resource)) {
            if (in == null) {
                throw new ClassNotFoundException(name);
            }
            byte[] bytes = in.readAllBytes();
            return defineClass(name, bytes, 0, bytes.length, domain);
        } catch (IOException e) {
            throw new ClassNotFoundException(name, e);
        }
    }

    @Override
    protected String findLibrary(String name) {
        if (library != null && "disni".equals(name)) {
            return library.toAbsolutePath().toString();
        }
        return null;
    }
}
