package io.rdmanio.core.fabric.shm;

import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;

/**
 * Runs the fabric's own file and socket work on a caller's thread so that the caller's interrupt cannot reach it.
 *
 * <p>Every JDK {@link java.nio.channels.InterruptibleChannel} closes itself when the thread using it is
 * interrupted (or already carries its interrupt status) in a blocking operation, and a {@code FileChannel}'s
 * {@code map}, {@code write}, {@code size} and {@code lock} all count as blocking. The shm fabric maps region
 * files, creates rings and connects rendezvous sockets on whatever thread asks: a selector loop whose thread
 * carries its interrupt status (a documented way to run one: select then returns at once), or an application
 * thread that is interrupted while it writes. Without this guard such a thread would close the fabric's internal
 * channel, fail a setup or a peer mapping, and with it a connection the interrupt was never meant for.
 *
 * <p>So the interrupt status is cleared for the duration of the work and set again afterwards: the application
 * still sees it (its own channels react to it as the JDK documents). An interrupt that arrives while the work
 * runs closes that work's channel; the work then runs again with a fresh one, at most {@link #ATTEMPTS} times.
 * Each unit of work must therefore open, use and close its own channels, and undo what it did when it fails.
 */
final class Uninterruptibly {

    /** How many interrupts in a row one unit of work survives before it reports them. */
    static final int ATTEMPTS = 8;

    /** Work that opens its own channels; run again from the start after an interrupt closed one. */
    interface Work<T> {
        T run() throws IOException;
    }

    private Uninterruptibly() {
    }

    static <T> T call(Work<T> work) throws IOException {
        boolean interrupted = Thread.interrupted();
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    return work.run();
                } catch (ClosedByInterruptException e) {
                    // The interrupt closed this attempt's channel and is pending again: keep it for the caller.
                    interrupted |= Thread.interrupted();
                    if (attempt >= ATTEMPTS) {
                        IOException failure = new IOException("the shm fabric's internal file or socket work was"
                            + " interrupted " + ATTEMPTS + " times in a row");
                        failure.initCause(e);
                        throw failure;
                    }
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
