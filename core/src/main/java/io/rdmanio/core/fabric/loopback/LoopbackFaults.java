package io.rdmanio.core.fabric.loopback;

import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.FabricException;
import java.util.Random;

/**
 * Fault injection for one {@link LoopbackFabric}: timing of completions, completion errors, dropped connections
 * and receivers that stop taking messages. Deterministic for a given seed and sequence of calls.
 *
 * <p>Thread-safe. The timing faults apply to work posted by this fabric's queue pairs (the sending side): held
 * work is neither carried out nor completed, and is released oldest first per queue pair, so per-queue-pair order
 * is kept. Faults change when and whether things happen, never the rules: a released send still needs a posted
 * receive, and every error still ends the connection and flushes what is outstanding.
 */
public final class LoopbackFaults {

    /** For {@link #failWorkRequest}: any queue pair of the fabric. */
    public static final int ANY_QP = -1;

    private static final int RUN = 0;
    private static final int HOLD = 1;
    private static final int RANDOM = 2;

    private final LoopbackFabric fabric;

    // ---- guarded by this (read without it on the post path through the volatile fields)
    private volatile int mode = RUN;
    private volatile int batch = 1;
    private double releaseProbability;
    private final Random random;
    private int anyCountdown;
    private int anyStatus;
    private volatile boolean anyArmed;

    LoopbackFaults(LoopbackFabric fabric, long seed) {
        this.fabric = fabric;
        this.random = new Random(seed);
    }

    /** Restarts the random sequence used by {@link #releaseRandomly}. */
    public synchronized void seed(long seed) {
        random.setSeed(seed);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Delayed and batched completions.

    /** From now on, posted sends are held: not carried out, not completed, until released. */
    public synchronized void holdCompletions() {
        mode = HOLD;
    }

    /**
     * From now on, each poll of a completion queue carries out a queue pair's held work with the given
     * probability (drawn from the seeded sequence), else holds it further.
     */
    public synchronized void releaseRandomly(double probability) {
        if (!(probability > 0 && probability <= 1)) {
            throw new IllegalArgumentException("release probability must be in (0, 1]: " + probability);
        }
        releaseProbability = probability;
        mode = RANDOM;
    }

    /**
     * From now on, a poll carries out a queue pair's posted work only in whole batches of {@code size} requests;
     * the remainder waits for more posts or for {@link #releaseAll()}. A size of 1 turns batching off.
     */
    public void batchCompletions(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("batch size must be at least 1: " + size);
        }
        batch = size;
    }

    /**
     * Carries out up to {@code count} held (or not yet batched) work requests now, oldest first per queue pair,
     * queue pairs in order of number. Holding continues.
     *
     * @return how many were carried out
     */
    public int releaseCompletions(int count) {
        if (count < 0) {
            throw new IllegalArgumentException("count must not be negative: " + count);
        }
        int released = 0;
        Effects fx = Effects.begin();
        try {
            for (LoopbackQueuePair qp : fabric.queuePairs()) {
                if (released == count) {
                    break;
                }
                released += qp.carryOut(fx, count - released, false);
            }
        } finally {
            fx.end();
        }
        return released;
    }

    /** Carries out every held or partly batched work request now. Holding and batching continue. */
    public int releaseAll() {
        return releaseCompletions(Integer.MAX_VALUE);
    }

    /** Removes every timing fault and carries out everything held. Completion errors already armed stay armed. */
    public int resume() {
        synchronized (this) {
            mode = RUN;
            batch = 1;
        }
        return releaseAll();
    }

    /** How many of {@code inFlight} requests of {@code qp} a poll carries out now. Called under its locks. */
    int allowance(LoopbackQueuePair qp, int inFlight) {
        int m = mode;
        if (m == HOLD) {
            return 0;
        }
        if (m == RANDOM) {
            synchronized (this) {
                if (mode == RANDOM && random.nextDouble() >= releaseProbability) {
                    return 0;
                }
            }
        }
        int b = batch;
        return b == 1 ? inFlight : inFlight - inFlight % b;
    }

    /** Whether a poll could carry out some of {@code inFlight} requests now (no random draw is consumed). */
    boolean pollWouldCarryOut(LoopbackQueuePair qp, int inFlight) {
        int m = mode;
        if (m == HOLD) {
            return false;
        }
        return inFlight >= batch;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Completion errors, dropped connections, frozen receivers.

    /**
     * Makes the {@code nth} next send posted on queue pair {@code qpNum} ({@link #ANY_QP}: on any queue
     * pair of this fabric) complete with {@code status} when it is carried out; its connection then fails as on
     * any error: both queue pairs in error, DISCONNECTED on both sides, everything else flushed.
     */
    public void failWorkRequest(int qpNum, int nth, int status) throws FabricException {
        if (nth < 1) {
            throw new IllegalArgumentException("nth must be at least 1: " + nth);
        }
        if (status == Completions.SUCCESS) {
            throw new IllegalArgumentException("an injected completion error needs an error status, not success");
        }
        if (qpNum == ANY_QP) {
            synchronized (this) {
                anyCountdown = nth;
                anyStatus = status;
                anyArmed = true;
            }
        } else {
            queuePair(qpNum).injectFailure(nth, status);
        }
    }

    /** The injected status for the next post on any queue pair, or success. Called under a queue-pair lock. */
    int takeAnyQpStatus() {
        if (!anyArmed) {
            return Completions.SUCCESS;
        }
        synchronized (this) {
            if (anyArmed && --anyCountdown == 0) {
                anyArmed = false;
                return anyStatus;
            }
            return Completions.SUCCESS;
        }
    }

    /**
     * Drops the connection of queue pair {@code qpNum} as if the link died: both queue pairs go to the error
     * state, everything outstanding completes with {@link Completions#WR_FLUSH_ERR}, both ids get DISCONNECTED.
     */
    public void dropConnection(int qpNum) throws FabricException {
        LoopbackQueuePair qp = queuePair(qpNum);
        Effects fx = Effects.begin();
        try {
            qp.fail(fx, "connection dropped: the link to the peer died");
        } finally {
            fx.end();
        }
    }

    /**
     * Makes later receives posted on {@code qpNum} succeed but stay invisible to incoming sends until
     * {@link #thawReceives}: a message that finds only withheld receives is receiver-not-ready, as always.
     */
    public void freezeReceives(int qpNum) throws FabricException {
        queuePair(qpNum).freezeReceives(true);
    }

    /** Makes the receives withheld by {@link #freezeReceives} available, in posting order. */
    public void thawReceives(int qpNum) throws FabricException {
        queuePair(qpNum).freezeReceives(false);
    }

    private LoopbackQueuePair queuePair(int qpNum) throws FabricException {
        LoopbackQueuePair qp = fabric.queuePair(qpNum);
        if (qp == null) {
            throw new FabricException("no live queue pair " + qpNum + " on this loopback fabric");
        }
        return qp;
    }
}
