package io.rdmanio.selector;

import io.rdmanio.core.VirtualThreads;

/**
 * How a blocking call on a routed java.net socket treats an interrupt, as the JDK's {@code NioSocketImpl} does: on
 * a platform thread it is not an interruptible channel (the call goes on, the interrupt status stays set); on a
 * virtual thread (JDK 21 and later) an interrupt closes the socket, as it closes a channel. Channels used as
 * channels always close on an interrupt. Stateless; thread-safe.
 */
final class InterruptPolicy {

    private InterruptPolicy() {
    }

    /** Whether a blocking call of a java.net socket ({@code javaNet}) on this thread goes on when interrupted. */
    static boolean ignoresInterrupts(boolean javaNet) {
        return javaNet && !VirtualThreads.current();
    }

    static boolean onVirtualThread() {
        return VirtualThreads.current();
    }
}
