package io.rdmanio.core.fabric.shm;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.net.StandardProtocolFamily;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The fabric's one watcher thread: it blocks in a JDK {@link Selector} on the rendezvous and connection sockets,
 * accepts connect requests, reads connection-manager messages, doorbells and end-of-file, and runs the notifiers
 * they arm. It is never on the data path: a completion reaches a poller through the shared rings alone, and the
 * watcher wakes only when a consumer that armed its queue is rung, or a connection changes state. An idle fabric
 * leaves it blocked.
 *
 * <p>Other threads reach it through {@link #execute}, which queues a task and wakes the selector. A periodic task
 * ({@link #schedule}) makes it wake at that period while the task asks for more; without one it blocks until a
 * socket or a task needs it.
 *
 * <p>It survives a failing handler, including the {@link InternalError} the JDK raises when a mapping touched on
 * this thread was shrunk under it: one broken connection never takes the watcher, and so every other connection,
 * down with it.
 */
final class ShmWatcher implements Runnable {

    /** What a registered channel does when it is ready. Runs on the watcher thread. */
    interface Handler {
        void ready(SelectionKey key);
    }

    private static final Consumer<SelectionKey> DISPATCH = ShmWatcher::dispatch;

    private final Selector selector;
    private final Thread thread;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    // ---- watcher thread only
    private BooleanSupplier periodic;
    private long periodNanos;
    private long nextDue;

    ShmWatcher(String name) throws IOException {
        // The provider of the UNIX-domain channels it watches: the JDK's own. Selector.open() would return
        // rdmanio's selector when rdmanio is the system-wide provider, an extra layer for nothing.
        selector = jdkProvider().openSelector();
        thread = new Thread(this, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** The JDK's own selector provider (that of its UNIX-domain channels), whatever the system-wide one is. */
    static SelectorProvider jdkProvider() throws IOException {
        SelectorProvider p = jdk;
        if (p == null) {
            try (ServerSocketChannel probe = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                p = probe.provider();
            }
            jdk = p;
        }
        return p;
    }

    /** {@link #jdkProvider()}, once found (the same object whichever thread finds it first). */
    private static volatile SelectorProvider jdk;

    /** Runs {@code task} on the watcher thread. */
    void execute(Runnable task) {
        tasks.add(task);
        selector.wakeup();
    }

    /**
     * Runs {@code task} on the watcher thread every {@code periodMillis} until it returns false; a task scheduled
     * while another runs is dropped (the caller keeps track).
     */
    void schedule(BooleanSupplier task, long periodMillis) {
        execute(() -> {
            if (periodic == null) {
                periodic = task;
                periodNanos = TimeUnit.MILLISECONDS.toNanos(periodMillis);
                nextDue = System.nanoTime() + periodNanos;
            }
        });
    }

    /**
     * Makes the watcher's select return and start over. A channel registered with a JDK selector and closed by
     * another thread keeps its descriptor until that selector deregisters its key on its next select; a watcher
     * blocked on an idle fabric would keep it for good, so whoever closes a watched channel calls this.
     */
    void wakeup() {
        selector.wakeup();
    }

    /**
     * Makes the watcher's select return, then waits (at most {@code timeoutNanos}, the caller's interrupt kept
     * for it) until the watcher has gone through that round: channels registered with it and closed before this
     * call are deregistered, their descriptors released. Not from the watcher thread.
     */
    void awaitRound(long timeoutNanos) {
        if (closed) {
            return;
        }
        CountDownLatch done = new CountDownLatch(1);
        execute(done::countDown);
        long deadline = System.nanoTime() + timeoutNanos;
        boolean interrupted = false;
        while (true) {
            try {
                done.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    boolean inWatcher() {
        return Thread.currentThread() == thread;
    }

    /** Registers {@code channel} (non-blocking) for {@code ops}; runs on the watcher thread. */
    void register(SelectableChannel channel, int ops, Handler handler) {
        execute(() -> {
            try {
                channel.register(selector, ops, handler);
            } catch (ClosedChannelException e) {
                // closed before it was registered: its owner has already torn it down
            }
        });
    }

    @Override
    public void run() {
        while (!closed) {
            try {
                runOnce();
            } catch (RuntimeException | Error e) {
                // A fault on a shrunk mapping is raised at a later safepoint of this thread, not at the access:
                // it may land anywhere in this loop (the periodic check then fails the connection it belongs to).
                // Any other failure here (a logger that cannot open its files at the process's descriptor limit
                // throws an Error) ends the round, never the watcher, which every connection of the fabric needs.
                uncaught(e);
            }
        }
        try {
            selector.close();
        } catch (IOException e) {
            // closing: nothing to recover
        }
    }

    private void runOnce() {
        try {
            // The action form hands each ready key straight over: no selected-key set, no iterator, so a
            // doorbell allocates nothing.
            if (periodic == null) {
                selector.select(DISPATCH);
            } else {
                long left = nextDue - System.nanoTime();
                if (left > 0) {
                    selector.select(DISPATCH, Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } else {
                    selector.selectNow(DISPATCH);
                }
            }
        } catch (IOException e) {
            return;
        }
        Runnable task;
        while ((task = tasks.poll()) != null) {
            runQuietly(task);
        }
        if (periodic != null && System.nanoTime() - nextDue >= 0) {
            nextDue = System.nanoTime() + periodNanos;
            BooleanSupplier p = periodic;
            runQuietly(() -> {
                if (!p.getAsBoolean()) {
                    periodic = null;
                }
            });
        }
    }

    private static void dispatch(SelectionKey key) {
        if (!key.isValid()) {
            return;
        }
        try {
            ((Handler) key.attachment()).ready(key);
        } catch (RuntimeException | Error e) {
            uncaught(e);
        }
    }

    private static void uncaught(Throwable e) {
        // One broken connection never takes the watcher down with it, nor does reporting it (the handler prints,
        // which may fail as the handler did, at a limit of the process).
        Thread t = Thread.currentThread();
        try {
            t.getUncaughtExceptionHandler().uncaughtException(t, e);
        } catch (Throwable ignored) {
            // nothing more can be said
        }
    }

    private static void runQuietly(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException | Error e) {
            uncaught(e);
        }
    }

    void close() {
        closed = true;
        selector.wakeup();
        if (!inWatcher()) {
            try {
                thread.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
