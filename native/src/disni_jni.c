/*
 * Library entry points: JNI registration of every NativeDispatcher method and the
 * exception helpers shared by the CM and verbs halves.
 *
 * Methods are bound with RegisterNatives instead of exported Java_* symbols, so the
 * library exports only JNI_OnLoad/JNI_OnUnload and a signature mismatch with the Java
 * class fails loudly at load time instead of at first call.
 */
#include "disni.h"

#include <stdio.h>
#include <string.h>

#define DISNI_DISPATCHER_CLASS "com/ibm/disni/verbs/impl/NativeDispatcher"

static jclass io_exception_class;
static jclass dispatcher_class;

void disni_throw(JNIEnv *env, const char *message)
{
    if ((*env)->ExceptionCheck(env)) {
        return; /* keep the first, most specific exception */
    }
    (*env)->ThrowNew(env, io_exception_class, message);
}

void disni_throw_errno(JNIEnv *env, const char *what, int err)
{
    char message[256];
    char reason[128];
    const char *text;

    if (err < 0) {
        err = -err;
    }
    /* GNU strerror_r: returns a pointer that may or may not be the buffer. */
    text = strerror_r(err, reason, sizeof(reason));
    snprintf(message, sizeof(message), "%s: %s (errno %d)", what, text, err);
    disni_throw(env, message);
}

static void release_refs(JNIEnv *env)
{
    if (dispatcher_class != NULL) {
        (*env)->DeleteGlobalRef(env, dispatcher_class);
        dispatcher_class = NULL;
    }
    if (io_exception_class != NULL) {
        (*env)->DeleteGlobalRef(env, io_exception_class);
        io_exception_class = NULL;
    }
}

static jclass global_class(JNIEnv *env, const char *name)
{
    jclass local = (*env)->FindClass(env, name);
    jclass global;

    if (local == NULL) {
        return NULL;
    }
    global = (*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    return global;
}

/*
 * Binds rdmanio's own natives when their class is visible to the loader loading this
 * library (FindClass in JNI_OnLoad uses that loader). Optional: whatever goes wrong here
 * is cleared and leaves DiSNI's natives bound; the Java side then falls back.
 */
static void register_rdmanio(JNIEnv *env)
{
    jclass natives = (*env)->FindClass(env, DISNI_RDMANIO_CLASS);

    if (natives == NULL) {
        (*env)->ExceptionClear(env);
        return;
    }
    if ((*env)->RegisterNatives(env, natives, disni_rdmanio_methods, disni_rdmanio_method_count) != JNI_OK) {
        (*env)->ExceptionClear(env);
    }
    (*env)->DeleteLocalRef(env, natives);
}

__attribute__((visibility("default"))) JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
    JNIEnv *env;
    int registered = 0;

    (void)reserved;
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK) {
        return JNI_ERR;
    }
    io_exception_class = global_class(env, "java/io/IOException");
    dispatcher_class = global_class(env, DISNI_DISPATCHER_CLASS);
    if (io_exception_class == NULL || dispatcher_class == NULL) {
        goto fail;
    }
    if ((*env)->RegisterNatives(env, dispatcher_class, disni_cm_methods, disni_cm_method_count) != JNI_OK) {
        goto fail;
    }
    registered = 1;
    if ((*env)->RegisterNatives(env, dispatcher_class, disni_verbs_methods, disni_verbs_method_count)
        != JNI_OK) {
        goto fail;
    }
    register_rdmanio(env);
    return JNI_VERSION_1_8;

fail:
    /* Leave the VM as it was: no half-bound class, no leaked references. The pending
     * NoSuchMethodError (if any) names the method whose signature did not match. */
    if (registered) {
        (*env)->UnregisterNatives(env, dispatcher_class);
    }
    release_refs(env);
    return JNI_ERR;
}

__attribute__((visibility("default"))) JNIEXPORT void JNICALL JNI_OnUnload(JavaVM *vm, void *reserved)
{
    JNIEnv *env;

    (void)reserved;
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) == JNI_OK) {
        release_refs(env);
    }
}
