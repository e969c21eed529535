package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.EngineConfig;
import io.rdmanio.core.engine.Engines;
import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.selector.RdmaSelectorProvider;
import io.rdmanio.selector.config.Action;
import io.rdmanio.selector.config.RdmanioConfig;
import io.rdmanio.selector.config.Route;
import io.rdmanio.selector.config.Router;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What the NIO-level shm tests share: a private shm directory per test class, this JVM's provider on an shm
 * fabric opened in that directory, and counting descriptors and directory entries.
 */
final class ShmNio implements AutoCloseable {

    static final long TIMEOUT_SECONDS = 20;
    static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);

    final Path dir;
    final Fabric fabric;
    final Engine engine;
    /** This JVM's provider: every loopback socket on the shm fabric in {@link #dir}, everything else on TCP. */
    final RdmaSelectorProvider provider;

    private ShmNio(Path dir, Fabric fabric, Engine engine) {
        this.dir = dir;
        this.fabric = fabric;
        this.engine = engine;
        this.provider = new RdmaSelectorProvider(new RdmanioConfig(
                router(a -> a.getAddress().isLoopbackAddress()), (peer, listening) -> engine, "shm", null));
    }

    /** A fresh private directory and this JVM's shm fabric and engine in it. */
    static ShmNio open() throws IOException {
        Path dir = newDirectory();
        Fabric fabric = Fabrics.open("shm", Map.of("shm.dir", dir.toString()));
        try {
            // As Engines.get configures a process's engine, so that this JVM agrees with the peers it starts.
            return new ShmNio(dir, fabric, Engines.open(fabric, EngineConfig.DEFAULT.withSlotSize(fabric.preferredSlotSize())));
        } catch (IOException | RuntimeException e) {
            fabric.close();
            throw e;
        }
    }

    @Override
    public void close() throws IOException {
        engine.close();
        fabric.close();
        deleteDirectory(dir);
    }

    /** A fresh shm directory (mode 0700) whose path is short enough for UNIX socket names. */
    static Path newDirectory() throws IOException {
        Path dir = Path.of("/dev/shm/rdmanio-n-" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        return dir;
    }

    static void deleteDirectory(Path dir) throws IOException {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    // best effort: a leftover is what the tests look for, not what cleanup fails on
                }
            });
        }
    }

    /** The names in the shm directory. */
    List<String> entries() throws IOException {
        return entriesOf(dir);
    }

    static List<String> entriesOf(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        }
    }

    /**
     * The names in the shm directory other than listener sockets ({@code l-HOST-PORT.sock}, which a dead
     * listener leaves until the next bind of its address replaces it) and the directory's bind lock.
     */
    List<String> connectionEntries() throws IOException {
        List<String> out = new ArrayList<>();
        for (String name : entries()) {
            if (!(name.startsWith("l-") && name.endsWith(".sock")) && !name.equals(".bind.lock")) {
                out.add(name);
            }
        }
        return out;
    }

    /** The rendezvous socket of a listener on {@code 127.0.0.1:port}. */
    Path listenerSocket(int port) {
        return dir.resolve("l-127.0.0.1-" + port + ".sock");
    }

    /** Number of open descriptors of this process. */
    static int openDescriptors() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return (int) fds.count();
        }
    }

    static Router router(Predicate<InetSocketAddress> onFabric) {
        Route rdma = new Route(Action.RDMA, "test: loopback on shm");
        return new Router() {
            @Override
            public Route forBind(InetSocketAddress local) {
                return onFabric.test(local) ? rdma : Route.NO_MATCH;
            }

            @Override
            public Route forConnect(InetSocketAddress remote) {
                return onFabric.test(remote) ? rdma : Route.NO_MATCH;
            }
        };
    }

    /** Waits (bounded) until {@code t} is parked or blocked inside a frame named {@code where}; a stack sample. */
    static void awaitBlocked(Thread t, String where) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        int seen = 0;
        while (System.nanoTime() - deadline < 0 && t.isAlive()) {
            boolean inCall = false;
            for (StackTraceElement e : t.getStackTrace()) {
                inCall |= e.getMethodName().equals(where);
            }
            Thread.State s = t.getState();
            boolean waiting = s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING || s == Thread.State.BLOCKED
                || s == Thread.State.RUNNABLE && stackHasNativeWait(t);
            if (inCall && waiting && ++seen >= 3) {
                return;
            }
            Thread.sleep(5);
        }
        if (t.isAlive()) {
            fail(t.getName() + " did not block in " + where + " within " + TIMEOUT_SECONDS + " s");
        }
    }

    /** This JVM's threads and their stacks (for a failure message). */
    static String threadDump() {
        StringBuilder b = new StringBuilder();
        for (var e : Thread.getAllStackTraces().entrySet()) {
            b.append('"').append(e.getKey().getName()).append("\" ").append(e.getKey().getState()).append('\n');
            for (StackTraceElement f : e.getValue()) {
                b.append("\tat ").append(f).append('\n');
            }
        }
        return b.toString();
    }

    private static boolean stackHasNativeWait(Thread t) {
        StackTraceElement[] st = t.getStackTrace();
        return st.length > 0 && st[0].isNativeMethod();
    }
}
