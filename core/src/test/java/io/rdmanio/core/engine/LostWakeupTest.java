package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.fabric.Notifier;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * One engine, two threads: a client that connects, says one byte, waits for the answer and closes, each step a
 * blocking {@link Connection#await}; and a server that waits as a selector does (progress, arm, re-check, park)
 * on its listener and its accepted connections. Neither side ever needs the other to poll for it, so every cycle
 * must finish: a cycle that does not is a lost wakeup, reported with every thread's stack.
 */
class LostWakeupTest {

    private static final int CYCLES = 3000;
    /** The server's open connections, for the report of a stuck cycle. */
    private static final List<Connection> SERVED = new CopyOnWriteArrayList<>();
    private static final long CYCLE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

    @Test
    void blockingConnectsToASelectorStyleServerNeverHang() throws Exception {
        EngineConfig config = EngineConfig.DEFAULT.withSpinMicros(0);
        try (Fabric fabric = Fabrics.open("loopback", Map.of("loopback.seed", "7"));
             Engine engine = Engines.open(fabric, config)) {
            runCycles(engine, CYCLES);
        }
    }

    @Test
    void blockingConnectsNeverHangWhenBothSidesSpinFirst() throws Exception {
        EngineConfig config = EngineConfig.DEFAULT.withSpinMicros(5);
        try (Fabric fabric = Fabrics.open("loopback", Map.of("loopback.seed", "8"));
             Engine engine = Engines.open(fabric, config)) {
            runCycles(engine, CYCLES);
        }
    }

    private static void runCycles(Engine engine, int cycles) throws Exception {
        Listener listener = engine.listen(new InetSocketAddress("127.0.0.1", 0), 64, ConnectionOptions.DEFAULT);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong served = new AtomicLong();
        Thread server = new Thread(() -> {
            try {
                serve(engine, listener, stop, served);
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        }, "lost-wakeup-server");
        AtomicLong done = new AtomicLong();
        AtomicReference<Connection> current = new AtomicReference<>();
        Thread client = new Thread(() -> {
            try {
                ByteBuffer hello = ByteBuffer.allocateDirect(1);
                ByteBuffer answer = ByteBuffer.allocateDirect(1);
                for (int i = 0; i < cycles && !stop.get(); i++) {
                    try (Connection c = engine.connect(listener.localAddress(), ConnectionOptions.DEFAULT)) {
                        current.set(c);
                        while (!c.finishConnect()) {
                            c.await(Readiness.CONNECT, Long.MAX_VALUE);
                        }
                        hello.clear().put(0, (byte) i);
                        while (hello.hasRemaining()) {
                            if (c.write(new ByteBuffer[] {hello}, 0, 1) == 0) {
                                c.await(Readiness.WRITE, Long.MAX_VALUE);
                            }
                        }
                        answer.clear();
                        while (answer.position() == 0) {
                            long n = c.read(new ByteBuffer[] {answer}, 0, 1);
                            if (n < 0) {
                                throw new IOException("the server closed before it answered in cycle " + i);
                            }
                            if (n == 0) {
                                c.await(Readiness.READ, Long.MAX_VALUE);
                            }
                        }
                        assertEquals((byte) (i + 1), answer.get(0), "answer of cycle " + i);
                    }
                    done.incrementAndGet();
                }
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        }, "lost-wakeup-client");
        server.setDaemon(true);
        client.setDaemon(true);
        server.start();
        client.start();
        try {
            long last = -1;
            long since = System.nanoTime();
            while (client.isAlive()) {
                client.join(100);
                if (failure.get() != null) {
                    break;
                }
                long now = done.get();
                if (now != last) {
                    last = now;
                    since = System.nanoTime();
                } else if (System.nanoTime() - since > CYCLE_TIMEOUT_NANOS) {
                    fail("cycle " + now + " of " + cycles + " made no progress for "
                        + TimeUnit.NANOSECONDS.toSeconds(CYCLE_TIMEOUT_NANOS) + " s (a lost wakeup): "
                        + describe(current.get(), listener) + "; threads:\n" + dumpThreads());
                }
            }
            if (failure.get() != null) {
                throw new AssertionError("after " + done.get() + " cycles", failure.get());
            }
            assertEquals(cycles, done.get());
        } finally {
            stop.set(true);
            LockSupport.unpark(server);
            engine.progress();
            listener.close();
            server.join(10_000);
        }
    }

    /** A selector in miniature: progress, collect readiness, arm, re-check, park. */
    private static void serve(Engine engine, Listener listener, AtomicBoolean stop, AtomicLong served)
        throws IOException {
        Thread self = Thread.currentThread();
        // The signal is kept in a flag: the park permit alone can be consumed by a lock taken while arming.
        AtomicBoolean signalled = new AtomicBoolean();
        Notifier wake = () -> {
            signalled.set(true);
            LockSupport.unpark(self);
        };
        List<Connection> conns = SERVED;
        conns.clear();
        ByteBuffer in = ByteBuffer.allocateDirect(16);
        ByteBuffer out = ByteBuffer.allocateDirect(1);
        while (!stop.get()) {
            engine.progress();
            boolean worked = false;
            if ((listener.readyOps() & Readiness.ACCEPT) != 0) {
                Connection c = listener.accept();
                if (c != null) {
                    conns.add(c);
                    worked = true;
                }
            }
            for (int k = conns.size() - 1; k >= 0; k--) {
                Connection c = conns.get(k);
                if ((c.readyOps() & Readiness.READ) == 0) {
                    continue;
                }
                in.clear();
                long n = c.read(new ByteBuffer[] {in}, 0, 1);
                if (n < 0) {
                    c.close();
                    conns.remove(k);
                    served.incrementAndGet();
                    worked = true;
                } else if (n > 0) {
                    out.clear().put(0, (byte) (in.get(0) + 1));
                    c.write(new ByteBuffer[] {out}, 0, 1);
                    worked = true;
                }
            }
            if (worked) {
                continue;
            }
            signalled.set(false);
            if (!engine.arm(wake)) {
                continue;
            }
            if ((listener.readyOps() & Readiness.ACCEPT) != 0 || anyReadable(conns) || stop.get()) {
                continue;
            }
            while (!signalled.get() && !stop.get()) {
                LockSupport.park(self);
            }
        }
        for (Connection c : conns) {
            c.close();
        }
    }

    private static boolean anyReadable(List<Connection> conns) {
        for (Connection c : conns) {
            if ((c.readyOps() & Readiness.READ) != 0) {
                return true;
            }
        }
        return false;
    }

    /** What each side would see if it looked now: a ready side that sleeps is a lost wakeup. */
    private static String describe(Connection client, Listener listener) {
        StringBuilder sb = new StringBuilder();
        sb.append("client ").append(client).append(" ready ops ").append(client == null ? -1 : client.readyOps());
        sb.append(", listener ready ops ").append(listener.readyOps());
        for (Connection c : SERVED) {
            sb.append(", served ").append(c).append(" ready ops ").append(c.readyOps());
        }
        return sb.toString();
    }

    private static String dumpThreads() {
        StringBuilder sb = new StringBuilder();
        for (ThreadInfo info : ManagementFactory.getThreadMXBean().dumpAllThreads(false, false)) {
            sb.append('"').append(info.getThreadName()).append("\" ").append(info.getThreadState()).append('\n');
            for (StackTraceElement e : info.getStackTrace()) {
                sb.append("    at ").append(e).append('\n');
            }
        }
        return sb.toString();
    }
}
