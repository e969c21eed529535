/*
 * librdmanio-shm: the shm fabric's sealed shared memory.
 *
 * A peer process of the same user can open any file this process shares with it (as /proc/PID/fd/FD) and shrink
 * it; the next access to a page past the new end faults with SIGBUS, which the JVM turns into an asynchronous
 * error in whatever thread touched the page, or a crash. A memfd sealed with F_SEAL_SHRINK and F_SEAL_GROW cannot
 * change size, for anyone, and F_SEAL_SEAL keeps the seals from being changed: the mapping stays valid as long as
 * it exists. Four calls, for io.rdmanio.core.fabric.shm.ShmNativeCalls; errors are IOExceptions with errno's text.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x0002U
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#endif

static void throw_io(JNIEnv *env, const char *what, int err) {
    char msg[256];
    snprintf(msg, sizeof msg, "%s: %s (errno %d)", what, strerror(err), err);
    jclass type = (*env)->FindClass(env, "java/io/IOException");
    if (type != NULL) {
        (*env)->ThrowNew(env, type, msg);
    }
}

/* A memfd of exactly `length` bytes that no process can shrink or grow; its descriptor, or -1 with an exception. */
JNIEXPORT jint JNICALL Java_io_rdmanio_core_fabric_shm_ShmNativeCalls_createSealed0(JNIEnv *env, jclass cls,
                                                                                 jstring name, jlong length) {
    (void) cls;
    const char *n = (*env)->GetStringUTFChars(env, name, NULL);
    if (n == NULL) {
        return -1;
    }
    int fd = (int) syscall(SYS_memfd_create, n, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    int err = errno;
    (*env)->ReleaseStringUTFChars(env, name, n);
    if (fd < 0) {
        throw_io(env, "memfd_create", err);
        return -1;
    }
    if (ftruncate(fd, (off_t) length) != 0) {
        err = errno;
        close(fd);
        throw_io(env, "ftruncate of a new memfd", err);
        return -1;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        err = errno;
        close(fd);
        throw_io(env, "sealing a new memfd (F_ADD_SEALS)", err);
        return -1;
    }
    return fd;
}

/* The seals of descriptor `fd` (F_GET_SEALS); 0 for a file that cannot carry seals (not a memfd). */
JNIEXPORT jint JNICALL Java_io_rdmanio_core_fabric_shm_ShmNativeCalls_seals0(JNIEnv *env, jclass cls, jint fd) {
    (void) cls;
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0) {
        if (errno == EINVAL) {
            return 0;
        }
        throw_io(env, "F_GET_SEALS", errno);
        return -1;
    }
    return seals;
}

/*
 * Opens `path` read-write (a peer's /proc/PID/fd/FD): the caller checks the seals of, and maps, this very
 * descriptor, so that the peer cannot swap what the path names between the check and the mapping.
 */
JNIEXPORT jint JNICALL Java_io_rdmanio_core_fabric_shm_ShmNativeCalls_open0(JNIEnv *env, jclass cls, jstring path) {
    (void) cls;
    const char *p = (*env)->GetStringUTFChars(env, path, NULL);
    if (p == NULL) {
        return -1;
    }
    int fd = open(p, O_RDWR | O_CLOEXEC);
    int err = errno;
    if (fd < 0) {
        char what[200];
        snprintf(what, sizeof what, "open %s", p);
        (*env)->ReleaseStringUTFChars(env, path, p);
        throw_io(env, what, err);
        return -1;
    }
    (*env)->ReleaseStringUTFChars(env, path, p);
    return fd;
}

JNIEXPORT void JNICALL Java_io_rdmanio_core_fabric_shm_ShmNativeCalls_close0(JNIEnv *env, jclass cls, jint fd) {
    (void) cls;
    if (close(fd) != 0 && errno != EINTR) {
        throw_io(env, "close", errno);
    }
}
