package shaded.io.netty.channel.epoll;

/**
 * Stands in for a shaded copy of Netty's epoll event loop (as gRPC's shaded Netty carries one): the agent must
 * notice its loading by name, whatever the prefix. It does nothing.
 */
public final class EpollEventLoop {

    private EpollEventLoop() {
    }

    /** Loads this class. */
    public static String touch() {
        return EpollEventLoop.class.getName();
    }
}
