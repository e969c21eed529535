package io.rdmanio.core.engine;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * The pause between two polls of a bounded spin (a blocking read, a select). The first few pauses only tell
 * the processor the thread is spinning; after them each pause yields the processor. On a machine with a spare
 * core yielding returns at once and costs a system call; when the peer that will answer is runnable on the
 * spinner's own core, it lets the peer run instead of burning the rest of the budget ahead of it (on two cores a
 * pure spin was measured to turn a 2 us shm round trip into 140 us: two spin budgets back to back).
 *
 * <p>A yield that comes back late means another thread had the core for a time slice. If that was the peer, the
 * next poll finds its answer; if it was unrelated work (a CPU-bound process beside the pair), yielding again
 * hands that work one more slice each time, milliseconds each, while a thread that parks is woken ahead of it
 * when the answer arrives (the scheduler favours a waking sleeper). So {@link #pause} tells the spinner to stop
 * after a late yield: poll once more, then arm and park.
 *
 * <p>A virtual thread does not spin at all ({@link #mayCurrentThreadSpin()}): its carrier is one of a few that
 * every virtual thread of the process shares, so a spinning virtual thread keeps the very threads that would run
 * the answer's reader off the carrier, while parking a virtual thread costs no system call (it unmounts).
 *
 * <p>Stateless; any thread.
 */
public final class SpinWait {

    /** Pauses that do not yield: about as long as a round trip that is already on its way. */
    static final int PAUSES_BEFORE_YIELD = 32;

    /**
     * A yield longer than this gave the core to another thread for a time slice (an idle core returns from a
     * yield in about a microsecond; the scheduler's slices are milliseconds).
     */
    static final long LATE_YIELD_NANOS = 50_000;

    /** {@code Thread.isVirtual()} where the running JDK has it (21 and later), else {@code null}. */
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();

    private SpinWait() {
    }

    private static MethodHandle isVirtualHandle() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
                MethodType.methodType(boolean.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null;
        }
    }

    /** Whether a wait on the current thread should spin before it parks: not on a virtual thread. */
    public static boolean mayCurrentThreadSpin() {
        if (IS_VIRTUAL == null) {
            return true;
        }
        try {
            return !(boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
        } catch (Throwable e) {
            return true;
        }
    }

    /**
     * Pauses before poll number {@code round + 1} of a spin (rounds count from 0).
     *
     * @return {@code false} when the spin should end after its next poll: the core is contended
     */
    public static boolean pause(int round) {
        if (round < PAUSES_BEFORE_YIELD) {
            Thread.onSpinWait();
            return true;
        }
        long start = System.nanoTime();
        Thread.yield();
        return System.nanoTime() - start < LATE_YIELD_NANOS;
    }
}
