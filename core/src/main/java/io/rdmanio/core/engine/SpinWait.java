package io.rdmanio.core.engine;

/**
 * The bounded spin of a blocking read, a select or a held write: how long to spin ({@link #budget}) and the pause
 * between two polls ({@link #pause}).
 *
 * <p>The first few pauses only tell the processor the thread is spinning; after them each pause yields the
 * processor. On a machine with a spare core yielding returns at once and costs a system call; when the peer that
 * will answer is runnable on the spinner's own core, it lets the peer run instead of burning the rest of the
 * budget ahead of it (on two cores a pure spin was measured to turn a 2 us shm round trip into 140 us: two spin
 * budgets back to back).
 *
 * <p><b>Crowded processors.</b> A yield that comes back only after {@link #CROWDED_YIELD_NANOS} let something
 * else run for longer than a whole spin: another thread, or the hypervisor that took the virtual processor. When
 * the machine has more runnable threads than processors a spin does harm: the scheduler counts a spinner as busy as
 * a CPU-bound process, so when the answer comes the spinner is not run before the other's time slice ends (whole
 * seconds of 4 ms round trips were measured beside one CPU-bound process), while a thread that sleeps is run at
 * once on its wakeup, as the kernel's TCP path does. So after a crowded yield every spin in the process that asks
 * {@link #budget} is skipped (the waiter arms and parks at once) for a rest of {@link #MIN_REST_NANOS}, doubled
 * while the spins that follow each rest find it crowded again, up to {@link #MAX_REST_NANOS}; {@link #CALM_YIELDS}
 * quick yields bring it back to the start. A quiet machine sees a slow yield now and then too (a compilation, the
 * hypervisor: 20 a second in a measured ping-pong, most 50-200 us long), which the short first rest keeps cheap;
 * on a crowded one the rests grow and a probe costs at most one slow wait each.
 *
 * <p>Stateless apart from that shared estimate, which is racy by design (a lost update only shifts a rest); any
 * thread; allocates nothing.
 */
public final class SpinWait {

    /** Pauses that do not yield: about as long as a round trip that is already on its way. */
    static final int PAUSES_BEFORE_YIELD = 32;
    /** A yield that took longer ran another thread: longer than the default spin budget itself. */
    static final long CROWDED_YIELD_NANOS = 50_000;
    static final long MIN_REST_NANOS = 1_000_000;
    static final long MAX_REST_NANOS = 80_000_000;
    /** Quick yields in a row that end a crowded spell's back-off. */
    static final int CALM_YIELDS = 256;

    /** {@link System#nanoTime()} until which spins are skipped; meaningful while {@link #resting}. */
    private static volatile long restUntil;
    private static volatile boolean resting;
    private static volatile long rest = MIN_REST_NANOS;
    private static volatile int calmYields;
    private static volatile long crowdedSpells;

    private SpinWait() {
    }

    /**
     * The spin budget to use now for a configured {@code spinNanos}: 0 while the processors were recently found
     * crowded, else {@code spinNanos}.
     */
    public static long budget(long spinNanos) {
        if (spinNanos <= 0 || !resting) {
            return spinNanos;
        }
        return budget(spinNanos, System.nanoTime());
    }

    static long budget(long spinNanos, long now) {
        if (spinNanos <= 0 || !resting) {
            return spinNanos;
        }
        if (now - restUntil < 0) {
            return 0;
        }
        resting = false;
        return spinNanos;
    }

    /** Pauses before poll number {@code round + 1} of a spin (rounds count from 0). */
    public static void pause(int round) {
        if (round < PAUSES_BEFORE_YIELD) {
            Thread.onSpinWait();
            return;
        }
        long start = System.nanoTime();
        Thread.yield();
        yielded(start, System.nanoTime() - start);
    }

    /** Takes in a yield that began at {@code start} and took {@code took} nanoseconds. */
    static void yielded(long start, long took) {
        if (took > CROWDED_YIELD_NANOS) {
            crowded(start + took);
        } else if (rest != MIN_REST_NANOS && ++calmYields >= CALM_YIELDS) {
            rest = MIN_REST_NANOS;
            calmYields = 0;
        }
    }

    /** The rest the next crowded yield starts (for tests). */
    static long nextRest() {
        return rest;
    }

    /** Forgets every crowded spell (for tests). */
    static void reset() {
        resting = false;
        rest = MIN_REST_NANOS;
        calmYields = 0;
    }

    /**
     * How many times spins were found crowded and skipped for a rest since the process started (the stats file's
     * {@code crowdedSpins}).
     */
    public static long crowdedSpells() {
        return crowdedSpells;
    }

    private static void crowded(long now) {
        calmYields = 0;
        if (resting && now - restUntil < 0) {
            return; // another spinner of this spell found it first
        }
        long r = rest;
        restUntil = now + r;
        resting = true;
        rest = Math.min(r * 2, MAX_REST_NANOS);
        crowdedSpells++;
    }
}
