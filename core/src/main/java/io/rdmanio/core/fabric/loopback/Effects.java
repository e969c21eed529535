package io.rdmanio.core.fabric.loopback;

import io.rdmanio.core.Logs;
import io.rdmanio.core.fabric.Notifier;
import org.slf4j.Logger;

/**
 * Work that must run after every fabric lock is released: notifiers to signal and completion queues whose
 * overrun must fail the queue pairs attached to them (which takes queue-pair locks).
 *
 * <p>One instance per thread, reused: an operation calls {@link #begin()}, records work while it holds locks,
 * and {@link #end()} runs the work once the outermost operation of the thread ends. Not thread-safe by design.
 */
final class Effects {

    private static final Logger LOG = Logs.get(Effects.class);
    private static final ThreadLocal<Effects> CURRENT = ThreadLocal.withInitial(Effects::new);

    private int depth;
    private Notifier[] notifiers = new Notifier[16];
    private int notifierCount;
    private LoopbackCompletionQueue[] overruns = new LoopbackCompletionQueue[4];
    private int overrunCount;

    private Effects() {
    }

    static Effects begin() {
        Effects fx = CURRENT.get();
        fx.depth++;
        return fx;
    }

    /** Ends an operation; the outermost one runs the recorded work, outside any lock. */
    void end() {
        if (depth > 1) {
            depth--;
            return;
        }
        // Stay at depth 1 while running, so that work done here records into this batch instead of recursing.
        try {
            while (overrunCount > 0 || notifierCount > 0) {
                if (overrunCount > 0) {
                    LoopbackCompletionQueue cq = overruns[--overrunCount];
                    overruns[overrunCount] = null;
                    cq.failAttached(this);
                    continue;
                }
                Notifier notifier = notifiers[--notifierCount];
                notifiers[notifierCount] = null;
                try {
                    notifier.signal();
                } catch (RuntimeException | Error e) {
                    LOG.warn("a fabric notifier threw; the others still run", e);
                }
            }
        } finally {
            depth = 0;
        }
    }

    void signal(Notifier notifier) {
        if (notifierCount == notifiers.length) {
            notifiers = java.util.Arrays.copyOf(notifiers, notifierCount * 2);
        }
        notifiers[notifierCount++] = notifier;
    }

    void overrun(LoopbackCompletionQueue cq) {
        if (overrunCount == overruns.length) {
            overruns = java.util.Arrays.copyOf(overruns, overrunCount * 2);
        }
        overruns[overrunCount++] = cq;
    }
}
