package io.rdmanio.core.engine;

/**
 * The pause between two polls of a bounded spin (a blocking read, a select). The first few pauses only tell
 * the processor the thread is spinning; after them each pause yields the processor. On a machine with a spare
 * core yielding returns at once and costs a system call; when the peer that will answer is runnable on the
 * spinner's own core, it lets the peer run instead of burning the rest of the budget ahead of it (on two cores a
 * pure spin was measured to turn a 2 us shm round trip into 140 us: two spin budgets back to back).
 *
 * <p>Stateless; any thread.
 */
public final class SpinWait {

    /** Pauses that do not yield: about as long as a round trip that is already on its way. */
    static final int PAUSES_BEFORE_YIELD = 32;

    private SpinWait() {
    }

    /** Pauses before poll number {@code round + 1} of a spin (rounds count from 0). */
    public static void pause(int round) {
        if (round < PAUSES_BEFORE_YIELD) {
            Thread.onSpinWait();
        } else {
            Thread.yield();
        }
    }
}
