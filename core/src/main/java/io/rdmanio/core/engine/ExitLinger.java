package io.rdmanio.core.engine;

import io.rdmanio.core.JdkAccess;
import io.rdmanio.core.Logs;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;

/**
 * Keeps TCP's promise at a normal JVM exit (return from main, {@code System.exit}, a signal that runs shutdown
 * hooks): the kernel closes a process's sockets and goes on delivering what they held, but a fabric connection's
 * unsent bytes live in this process and its engine's closer is a daemon thread. One shutdown hook, registered when
 * the first fabric connection of the JVM is set up, closes every connection still open (FIN after the bytes
 * written) and drives every engine until each connection has delivered, failed, or outlived
 * {@code rdmanio.lingerMillis} without delivering. {@code Runtime.halt} and SIGKILL run no hook.
 *
 * <p>Thread-safe: the engine set is guarded by its own monitor, a leaf lock.
 */
final class ExitLinger {

    private static final Logger LOG = Logs.get(ExitLinger.class);

    // ---- guarded by ENGINES
    private static final Set<FabricEngine> ENGINES = Collections.newSetFromMap(new IdentityHashMap<>());
    private static boolean hookRegistered;
    private static boolean exiting;
    /** Every application shutdown hook has finished and the engines are being closed: the JVM halts next. */
    private static volatile boolean halting;

    private ExitLinger() {
    }

    /** {@code engine} has connections (or may get some): it is driven at exit, and the hook exists. */
    static void watch(FabricEngine engine) {
        synchronized (ENGINES) {
            if (exiting || !ENGINES.add(engine) || hookRegistered) {
                return;
            }
            hookRegistered = true;
        }
        if (JdkAccess.registerLateShutdownHook(() -> run(true))) {
            return;
        }
        try {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> run(false), "rdmanio-exit-linger"));
        } catch (IllegalStateException e) {
            // Already exiting: the hooks have started, and this connection was set up by one of them.
            LOG.debug("the JVM is exiting; a connection set up now is not lingered at exit");
        }
    }

    /**
     * Whether the JVM is past its application's shutdown hooks and about to halt. Application threads blocked on a
     * connection then stay blocked, as they do on the kernel's TCP until the process is gone: the exit hook closing
     * their connections must not show them an end of stream, a closed listener or a failed write.
     */
    static boolean halting() {
        return halting;
    }

    /** Blocks the calling thread until the JVM halts (it never returns once {@link #halting()}). */
    static void blockUntilHalt() {
        while (halting) {
            LockSupport.park(ExitLinger.class);
        }
    }

    /** A closed engine has nothing left to deliver. */
    static void forget(FabricEngine engine) {
        synchronized (ENGINES) {
            ENGINES.remove(engine);
        }
    }

    /**
     * Drives every engine's connections to delivery. {@code afterApplicationHooks}: this runs after every
     * application shutdown hook has finished, so connections are closed at once and, once delivered, the engines
     * are closed too (their listeners, rendezvous files and fabric threads: a thread blocked in a system call,
     * such as shm's watcher in its selector, would otherwise hold up the JVM's exit by some 300 ms). Otherwise it
     * runs beside the application's hooks, which may still be using a connection, so each is closed only once
     * its application has left it unused for a moment, and the engines stay open.
     */
    private static void run(boolean afterApplicationHooks) {
        List<FabricEngine> engines;
        synchronized (ENGINES) {
            exiting = true;
            engines = new ArrayList<>(ENGINES);
        }
        if (afterApplicationHooks) {
            halting = true;
        }
        // Every engine's connections are closed before any is waited for, so that their deadlines run together.
        List<Thread> waits = new ArrayList<>(engines.size());
        for (FabricEngine e : engines) {
            Thread t = new Thread(() -> {
                try {
                    e.lingerAtExit(afterApplicationHooks);
                } catch (RuntimeException ex) {
                    LOG.warn("delivering the {} engine's connections at exit failed", e.fabricName(), ex);
                }
            }, "rdmanio-exit-linger-" + e.fabricName());
            t.start();
            waits.add(t);
        }
        for (Thread t : waits) {
            try {
                t.join();
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        if (afterApplicationHooks) {
            for (FabricEngine e : engines) {
                try {
                    e.close();
                } catch (RuntimeException ex) {
                    LOG.debug("closing the {} engine at exit failed", e.fabricName(), ex);
                }
            }
        }
    }
}
