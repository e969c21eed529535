package io.rdmanio.core.testsupport;

import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import java.io.IOException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/** Waiting for completions in fabric tests, the same way for every fabric. */
public final class CompletionWaits {

    /** How long one wait on the notifier lasts before the queue is polled and armed again. */
    private static final long SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private CompletionWaits() {
    }

    /** Copies completion {@code i} of {@code from} into entry {@code j} of {@code to}. */
    public static void copy(Completions from, int i, Completions to, int j) {
        to.wrId[j] = from.wrId[i];
        to.status[j] = from.status[i];
        to.opcode[j] = from.opcode[i];
        to.byteLen[j] = from.byteLen[i];
        to.qpNum[j] = from.qpNum[i];
    }

    /**
     * Polls until exactly {@code n} completions have arrived on {@code cq}, waiting through its notifier in bounded
     * slices (a notification missed would cost one slice, not the test); fails if a poll returns more than {@code n}
     * or fewer arrive within {@code timeoutNanos}.
     */
    public static Completions awaitExactly(CompletionQueue cq, int n, long timeoutNanos) throws IOException {
        Completions all = new Completions(Math.max(n, 1));
        Completions batch = new Completions(Math.max(n, 1));
        long deadline = System.nanoTime() + timeoutNanos;
        Semaphore signal = new Semaphore(0);
        int got = 0;
        while (got < n) {
            int k = cq.poll(batch);
            for (int i = 0; i < k; i++) {
                if (got == n) {
                    fail("more completions than the " + n + " expected: wr_id " + batch.wrId[i] + ", "
                        + Completions.statusName(batch.status[i]));
                }
                copy(batch, i, all, got++);
            }
            if (got < n && k == 0) {
                if (System.nanoTime() - deadline > 0) {
                    fail("only " + got + " of " + n + " completions within "
                        + TimeUnit.NANOSECONDS.toSeconds(timeoutNanos) + " s");
                }
                cq.requestNotify(signal::release);
                try {
                    signal.tryAcquire(SLICE_NANOS, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError("interrupted while waiting for completions", e);
                }
            }
        }
        all.count(got);
        return all;
    }
}
