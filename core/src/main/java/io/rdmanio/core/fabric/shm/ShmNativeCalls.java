package io.rdmanio.core.fabric.shm;

import java.io.IOException;

/**
 * librdmanio-shm's JNI entry points (core/src/main/native/rdmanio_shm.c). Defined by a private class loader of
 * {@link ShmNatives}, never by the loader of the rest of rdmanio: a JNI library binds to the loader that loads it,
 * and this one stays out of the application class loader's libraries. Stateless.
 */
final class ShmNativeCalls {

    private ShmNativeCalls() {
    }

    static void load(String file) {
        System.load(file);
    }

    static native int createSealed0(String name, long length) throws IOException;

    static native int seals0(int fd) throws IOException;

    static native int open0(String path) throws IOException;

    static native void close0(int fd) throws IOException;

    static native int openPipeWriter0(String path) throws IOException;

    static native int ring0(int fd);

    static native int fdVal0(Object channel) throws IOException;
}
