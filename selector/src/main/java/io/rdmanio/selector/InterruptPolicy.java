package io.rdmanio.selector;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * How a blocking call on a routed java.net socket treats an interrupt, as the JDK's {@code NioSocketImpl} does: on
 * a platform thread it is not an interruptible channel (the call goes on, the interrupt status stays set); on a
 * virtual thread (JDK 21 and later) an interrupt closes the socket, as it closes a channel. Channels used as
 * channels always close on an interrupt. Stateless; thread-safe.
 */
final class InterruptPolicy {

    /** {@code Thread.isVirtual()}, where the JDK has it (21 and later); null on 17. */
    private static final MethodHandle IS_VIRTUAL = findIsVirtual();

    private InterruptPolicy() {
    }

    /** Whether a blocking call of a java.net socket ({@code javaNet}) on this thread goes on when interrupted. */
    static boolean ignoresInterrupts(boolean javaNet) {
        return javaNet && !onVirtualThread();
    }

    static boolean onVirtualThread() {
        if (IS_VIRTUAL == null) {
            return false;
        }
        try {
            return (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static MethodHandle findIsVirtual() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
                MethodType.methodType(boolean.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null;
        }
    }
}
