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

    /**
     * Where the agent jar keeps DiSNI's classes: under this folder rather than at their own paths, so that no other
     * class loader can load them (an application that brings DiSNI itself gets its own); only this loader defines
     * them, from these bytes. Without the agent (DiSNI's jar on the class path) they are at their own paths.
     */
    static final String HIDDEN = "META-INF/rdmanio/disni/";

    /** The resource of class file {@code resource} as {@code parent} holds it: hidden by the agent, or in place. */
    static java.net.URL classBytes(ClassLoader parent, String resource) {
        java.net.URL hidden = parent.getResource(HIDDEN + resource);
        return hidden != null ? hidden : parent.getResource(resource);
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
        String resource = name.replace('.', '/') + ".class";
        java.net.URL url = classBytes(getParent(), resource);
        if (url == null) {
            throw new ClassNotFoundException(name);
        }
        try (InputStream in = url.openStream()) {
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
