package io.rdmanio.core;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Whether the current thread is a virtual thread (JDK 21 and later; never on 17, which has none), for code built
 * for Java 17. Stateless; thread-safe.
 */
public final class VirtualThreads {

    /** {@code Thread.isVirtual()}, where the JDK has it; null on 17. */
    private static final MethodHandle IS_VIRTUAL = find();

    private VirtualThreads() {
    }

    public static boolean current() {
        if (IS_VIRTUAL == null) {
            return false;
        }
        try {
            return (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static MethodHandle find() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
                MethodType.methodType(boolean.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null;
        }
    }
}
