package io.rdmanio.core.fabric.disni.verbs;

/**
 * The few native calls the fabric needs beyond DiSNI's NativeDispatcher, implemented by libdisni and bound by its
 * {@code JNI_OnLoad} when this class is visible to the loader that loads the library (the fabric's class loader).
 * An older library leaves them unbound: a call then throws {@link UnsatisfiedLinkError}, and the fabric does
 * without. Thread-safe (stateless); every call returns 0 or a negative errno.
 */
final class VerbsNatives {

    private VerbsNatives() {
    }

    /**
     * Makes {@code targetFd} refer to the open file of the completion channel {@code channelHandle} (a
     * {@code struct ibv_comp_channel *}): {@code dup3(channel->fd, targetFd, O_CLOEXEC)}, which closes whatever
     * {@code targetFd} referred to before. Closing {@code targetFd} later closes only this duplicate.
     */
    static native int dupCompChannel0(long channelHandle, int targetFd);
}
