package io.rdmanio.core.fabric.shm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The rendezvous socket files this JVM's listeners bound, so that they are removed at close and at JVM exit: a
 * shutdown hook (run at normal exit, {@code System.exit} and SIGTERM) unlinks each file that is still the one this
 * JVM bound (same inode). Files of a process killed without hooks (SIGKILL, a halt) are swept by the next bind in
 * the directory, once provably stale (see {@link ShmCmId}).
 *
 * <p>Thread-safe: a concurrent map; the hook is registered once, on the first bind.
 */
final class RendezvousFiles {

    private static final Map<Path, Long> BOUND = new ConcurrentHashMap<>();
    private static final Path PROC_NET_UNIX = Path.of("/proc/net/unix");
    private static volatile boolean hooked;

    private RendezvousFiles() {
    }

    /** Records a socket file this JVM bound, with its inode. */
    static void bound(Path path, long inode) {
        BOUND.put(path, inode);
        if (!hooked) {
            hook();
        }
    }

    private static synchronized void hook() {
        if (hooked) {
            return;
        }
        try {
            Runtime.getRuntime().addShutdownHook(new Thread(RendezvousFiles::removeAll, "rdmanio-shm-rendezvous-cleanup"));
        } catch (IllegalStateException e) {
            // The JVM is already exiting: the listener that is binding now is closed by the exit itself.
        }
        hooked = true;
    }

    /** Unlinks {@code path} if it is still the file of {@code inode} (another listener may have replaced it). */
    static void remove(Path path, long inode) {
        if (path == null) {
            return;
        }
        BOUND.remove(path, inode);
        try {
            if (ShmHost.inode(path) == inode) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            // already gone, or replaced by another listener: not ours to remove
        }
    }

    private static void removeAll() {
        for (Map.Entry<Path, Long> e : BOUND.entrySet()) {
            remove(e.getKey(), e.getValue());
        }
    }

    /**
     * The paths of the UNIX sockets bound on this host (in this network namespace), from {@code /proc/net/unix}; a
     * socket file not among them has no listener, which a connect then confirms. Null when unreadable.
     */
    static Set<String> boundPathsOfThisHost() {
        List<String> lines;
        try {
            // A caller's interrupt must not close the read's channel and make a bound socket look unbound.
            lines = Uninterruptibly.call(() -> Files.readAllLines(PROC_NET_UNIX, StandardCharsets.UTF_8));
        } catch (IOException | RuntimeException e) {
            return null;
        }
        Set<String> paths = new HashSet<>();
        for (int i = 1; i < lines.size(); i++) {
            String[] f = lines.get(i).trim().split("\\s+", 8);
            if (f.length == 8 && f[7].startsWith("/")) {
                paths.add(f[7]);
            }
        }
        return paths;
    }
}
