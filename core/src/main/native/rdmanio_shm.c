/*
 * librdmanio-shm: the shm fabric's sealed shared memory.
 *
 * A peer process of the same user can open any file this process shares with it (as /proc/PID/fd/FD) and shrink
 * it; the next access to a page past the new end faults with SIGBUS, which the JVM turns into an asynchronous
 * error in whatever thread touched the page, or a crash. A memfd sealed with F_SEAL_SHRINK and F_SEAL_GROW cannot
 * change size, for anyone, and F_SEAL_SEAL keeps the seals from being changed: the mapping stays valid as long as
 * it exists. Four calls for that, and two for the wakeup pipes of completion queues (a peer's ring written straight
 * into the pipe a waiting selector watches), for io.rdmanio.core.fabric.shm.ShmNativeCalls; errors are IOExceptions
 * with errno's text.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

/* Closes `fd` (a descriptor this call opened and will not return) and throws as throw_io does; returns -1. */
static jint close_and_throw(JNIEnv *env, int fd, const char *what, int err) {
    close(fd);
    throw_io(env, what, err);
    return -1;
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
        return close_and_throw(env, fd, "ftruncate of a new memfd", errno);
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        return close_and_throw(env, fd, "sealing a new memfd (F_ADD_SEALS)", errno);
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

/* Opens `path` with `flags`; the descriptor, or -1 with an IOException naming the path and `verb`. */
static int open_path(JNIEnv *env, jstring path, int flags, const char *verb) {
    const char *p = (*env)->GetStringUTFChars(env, path, NULL);
    if (p == NULL) {
        return -1;
    }
    int fd = open(p, flags);
    int err = errno;
    if (fd < 0) {
        char what[200];
        snprintf(what, sizeof what, "open %s%s", p, verb);
        (*env)->ReleaseStringUTFChars(env, path, p);
        throw_io(env, what, err);
        return -1;
    }
    (*env)->ReleaseStringUTFChars(env, path, p);
    return fd;
}

/*
 * Opens `path` read-write (a peer's /proc/PID/fd/FD): the caller checks the seals of, and maps, this very
 * descriptor, so that the peer cannot swap what the path names between the check and the mapping.
 */
JNIEXPORT jint JNICALL Java_io_rdmanio_core_fabric_shm_ShmNativeCalls_open0(JNIEnv *env, jclass cls, jstring path) {
    (void) cls;
    return open_path(env, path, O_RDWR | O_CLOEXEC, "");
}

JNIEXPORT void JNICALL Java_io_rdmanio_core_fabric_shm_ShmNativeCalls_close0(JNIEnv *env, jclass cls, jint fd) {
    (void) cls;
    if (close(fd) != 0 && errno != EINTR) {
        throw_io(env, "close", errno);
    }
}

/*
 * Opens `path` (a peer's /proc/PID/fd/FD naming the write end of its completion queue's wakeup pipe) for
 * non-blocking writes: a ring never blocks the ringing thread, whatever the peer does with its pipe. Anything but
 * a pipe is refused, so a peer cannot name a file of its own choosing as its wakeup.
 */
JNIEXPORT jint JNICALL Java_io_rdmanio_core_fabric_shm_ShmNativeCalls_openPipeWriter0(JNIEnv *env, jclass cls,
                                                                                   jstring path) {
    (void) cls;
    int fd = open_path(env, path, O_WRONLY | O_NONBLOCK | O_CLOEXEC, " for writing");
    if (fd < 0) {
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        return close_and_throw(env, fd, "fstat of the peer's wakeup descriptor", errno);
    }
    if (!S_ISFIFO(st.st_mode)) {
        return close_and_throw(env, fd, "the peer's wakeup descriptor is not a pipe", EINVAL);
    }
    return fd;
}

/*
 * Writes one byte into a pipe opened by openPipeWriter0: 0 when written or when the pipe is full (a wakeup is
 * pending then anyway), else errno (EPIPE once the peer's end is gone; the JVM ignores SIGPIPE).
 */
JNIEXPORT jint JNICALL Java_io_rdmanio_core_fabric_shm_ShmNativeCalls_ring0(JNIEnv *env, jclass cls, jint fd) {
    (void) env;
    (void) cls;
    static const char one = 1;
    for (;;) {
        if (write(fd, &one, 1) == 1) {
            return 0;
        }
        if (errno == EINTR) {
            continue;
        }
        return errno == EAGAIN ? 0 : errno;
    }
}

/*
 * The descriptor number of a JDK pipe channel (its private int field fdVal, which JNI reads whatever the module
 * exports): the completion queue publishes its wakeup pipe's write end by number, for peers to open through /proc.
 */
JNIEXPORT jint JNICALL Java_io_rdmanio_core_fabric_shm_ShmNativeCalls_fdVal0(JNIEnv *env, jclass cls,
                                                                          jobject channel) {
    (void) cls;
    jclass type = (*env)->GetObjectClass(env, channel);
    jfieldID field = (*env)->GetFieldID(env, type, "fdVal", "I");
    if (field == NULL) {
        (*env)->ExceptionClear(env);
        throw_io(env, "the JDK's pipe channel has no fdVal field", EINVAL);
        return -1;
    }
    return (*env)->GetIntField(env, channel, field);
}
