/*
 * libdisni: the JNI half of DiSNI 2.1's com.ibm.disni.verbs.impl.NativeDispatcher,
 * implemented on rdma-core's public librdmacm and libibverbs interfaces.
 *
 * Contract with the Java side (learned from DiSNI 2.1's class files):
 *  - Every verbs or CM object crosses JNI as its native pointer in a jlong ("objId").
 *  - Work requests, scatter/gather entries, work completions and socket addresses are
 *    serialized by Java into native-order direct buffers at the fixed offsets below and
 *    passed as raw addresses. NativeDispatcher's constructor asks for these sizes and
 *    offsets and adopts whatever the library reports, so they are the library's to define.
 *  - Calls that return a handle throw java.io.IOException on failure (the Java side
 *    declares it and would otherwise only see a null). Calls that return an int report
 *    failure as a negative errno, which the Java side tests with "< 0" or "!= 0".
 *
 * Thread-safety: the library keeps no mutable state besides class references fixed at
 * load time; every function may run on any thread concurrently, with the same rules as
 * the underlying verbs call.
 */
#ifndef RDMANIO_DISNI_H
#define RDMANIO_DISNI_H

#include <jni.h>
#include <stdint.h>

#define DISNI_HIDDEN __attribute__((visibility("hidden")))

/* The version DiSNI 2.1's NativeDispatcher insists on (its JVERBS_VERSION). */
#define DISNI_JNI_VERSION 32

/*
 * The send work request as Java writes it (NatIbvSendWR.writeBack): the head of
 * struct ibv_send_wr up to wr.rdma. It is translated, never handed to libibverbs
 * directly, because the real struct is longer and its tail would be uninitialized.
 */
#define DISNI_SEND_WR_SIZE 72
#define DISNI_SEND_WR_WRID 0
#define DISNI_SEND_WR_NEXT 8
#define DISNI_SEND_WR_SGLIST 16
#define DISNI_SEND_WR_NUMSGE 24
#define DISNI_SEND_WR_OPCODE 28
#define DISNI_SEND_WR_FLAGS 32
#define DISNI_SEND_WR_IMM 36
#define DISNI_SEND_WR_REMOTE_ADDR 40
#define DISNI_SEND_WR_RKEY 48

/* Socket address buffers are sized for an IPv6 address; Java reads the IPv4 head. */
#define DISNI_SOCKADDR_SIZE 28

/* Throws java.io.IOException("<what>: <strerror(err)> (errno <err>)"). */
DISNI_HIDDEN void disni_throw_errno(JNIEnv *env, const char *what, int err);
/* Throws java.io.IOException(message). */
DISNI_HIDDEN void disni_throw(JNIEnv *env, const char *message);

/*
 * Waits until fd is readable; timeout_ms < 0 waits forever. Returns 1 when readable,
 * 0 on timeout, -errno on failure.
 */
DISNI_HIDDEN int disni_wait_readable(int fd, int timeout_ms);

/* A CLOCK_MONOTONIC deadline in ms for a timeout; timeout_ms < 0 gives -1 ("never"). */
DISNI_HIDDEN long long disni_deadline(int timeout_ms);
/* Milliseconds left until a deadline (0 once passed), or -1 for "never". */
DISNI_HIDDEN int disni_time_left(long long deadline_ms);

static inline void *disni_ptr(jlong value) { return (void *)(uintptr_t)value; }
static inline jlong disni_handle(const void *ptr) { return (jlong)(uintptr_t)ptr; }

/* The method tables of the two halves, registered together in JNI_OnLoad. */
DISNI_HIDDEN extern const JNINativeMethod disni_cm_methods[];
DISNI_HIDDEN extern const int disni_cm_method_count;
DISNI_HIDDEN extern const JNINativeMethod disni_verbs_methods[];
DISNI_HIDDEN extern const int disni_verbs_method_count;

/*
 * rdmanio's own natives (class io.rdmanio.core.fabric.disni.verbs.VerbsNatives), bound in
 * JNI_OnLoad only when the class is visible to the loader loading the library; a plain
 * DiSNI user never sees them.
 */
#define DISNI_RDMANIO_CLASS "io/rdmanio/core/fabric/disni/verbs/VerbsNatives"
DISNI_HIDDEN extern const JNINativeMethod disni_rdmanio_methods[];
DISNI_HIDDEN extern const int disni_rdmanio_method_count;

#endif
