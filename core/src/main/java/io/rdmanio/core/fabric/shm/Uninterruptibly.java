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
 * <p>Two ways, both keeping the caller's interrupt status for the application (its own channels react to it as
 * the JDK documents):
 * <ul>
 *   <li>{@link #onFileThread}: file creation and mapping, which may run under a connection's lock inside a
 *       blocking channel operation, run on a private thread that nothing interrupts, and the caller waits for it
 *       without reacting to interrupts.</li>
 *   <li>{@link #call}: work outside any connection lock (a rendezvous connect, reading {@code /proc}) runs on the
 *       caller's thread with the interrupt status cleared and set again afterwards. An interrupt that arrives
 *       while it runs closes that work's channel; the work then runs again with a fresh one, at most
 *       {@link #ATTEMPTS} times. Such work must open, use and close its own channels, and undo what it did when it
 *       fails.</li>
 * </ul>
 */
final class Uninterruptibly {

    /** How many interrupts in a row one unit of work survives before it reports them. */
    static final int ATTEMPTS = 8;

    /** Work that opens its own channels; run again from the start after an interrupt closed one. */
    interface Work<T> {
        T run() throws IOException;
    }

    /**
     * The thread of {@link #onFileThread}: private, so nothing interrupts it, started on first use, idle
     * otherwise. One for the process: what it runs is short (file creation and mapping on a memory file system).
     */
    private static final java.util.concurrent.ExecutorService FILE_THREAD =
        java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "rdmanio-shm-files");
            t.setDaemon(true);
            return t;
        });
    private static final ThreadLocal<Boolean> ON_FILE_THREAD = new ThreadLocal<>();

    private Uninterruptibly() {
    }

    /**
     * Runs {@code work} on the fabric's private file thread and waits for it without reacting to interrupts (the
     * interrupt status is kept). For file work that may run while the caller holds a connection's lock inside a
     * blocking channel operation: there, even with its interrupt status cleared, the caller must not touch a JDK
     * interruptible channel, because that channel's {@code begin()} takes the thread's interrupt lock, which an
     * interrupting thread holds while its hook closes the caller's channel and waits for that very connection
     * lock (a deadlock found by the interrupted-writes conformance test).
     */
    static <T> T onFileThread(Work<T> work) throws IOException {
        if (ON_FILE_THREAD.get() != null) {
            return work.run();
        }
        java.util.concurrent.Future<T> f = FILE_THREAD.submit(() -> {
            ON_FILE_THREAD.set(Boolean.TRUE);
            return work.run();
        });
        boolean interrupted = false;
        try {
            for (;;) {
                try {
                    return f.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (java.util.concurrent.ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof IOException) {
                        throw (IOException) cause;
                    }
                    if (cause instanceof RuntimeException) {
                        throw (RuntimeException) cause;
                    }
                    if (cause instanceof Error) {
                        throw (Error) cause;
                    }
                    throw new IOException(cause);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
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
