package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;

/**
 * What the NIO tests share: channels and selectors opened through {@link #provider()} and closed after each
 * test, threads started and awaited with timeouts, bounded read/write loops that wait on a selector.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class NioTestSupport {

    static final long WAIT_SECONDS = 20;

    /** Tracked by the test's thread and by the threads it starts (a server accepting). */
    private final Tracked resources = new Tracked();
    private final List<Thread> threads = new ArrayList<>();

    /** The provider under test. */
    protected abstract SelectorProvider provider();

    /** Whether servers bound by the suite listen on TCP (else on a fabric, which explicitly bound sockets skip). */
    protected boolean serversOnTcp() {
        return true;
    }

    /** The loopback address servers bind to and clients connect to. */
    protected InetAddress address() {
        return InetAddress.getLoopbackAddress();
    }

    @AfterEach
    void closeResources() throws Exception {
        for (Thread t : threads) {
            t.interrupt();
            t.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        }
        resources.closeAll();
    }

    // ------------------------------------------------------------------ helpers

    <T extends AutoCloseable> T track(T r) {
        return resources.track(r);
    }

    Selector selector() throws IOException {
        return track(provider().openSelector());
    }

    ServerSocketChannel server() throws IOException {
        ServerSocketChannel s = track(provider().openServerSocketChannel());
        s.bind(new InetSocketAddress(address(), 0));
        return s;
    }

    SocketChannel client() throws IOException {
        return track(provider().openSocketChannel());
    }

    /** A connected pair {client, accepted}, both in blocking mode. */
    SocketChannel[] pair() throws IOException {
        return pair(server());
    }

    /** A connected client and the channel {@code server} accepted for it: {client, accepted}. */
    SocketChannel[] pair(ServerSocketChannel server) throws IOException {
        SocketChannel c = client();
        assertTrue(c.connect(server.getLocalAddress()));
        SocketChannel a = track(server.accept());
        assertNotNull(a);
        return new SocketChannel[] {c, a};
    }

    /** Runs {@code body} on a new thread; the future completes with its result or failure. */
    <T> CompletableFuture<T> start(String name, Callable<T> body, AtomicReference<Thread> thread) {
        CompletableFuture<T> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(body.call());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        }, name);
        t.setDaemon(true);
        threads.add(t);
        if (thread != null) {
            thread.set(t);
        }
        t.start();
        return f;
    }

    static <T> T await(CompletableFuture<T> f) throws Exception {
        try {
            return f.get(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception) {
                throw (Exception) e.getCause();
            }
            throw e;
        }
    }

    /** The failure {@code f} completed with, which must be of {@code type}. */
    static <E extends Throwable> E awaitFailure(Class<E> type, CompletableFuture<?> f) throws Exception {
        try {
            Object r = f.get(WAIT_SECONDS, TimeUnit.SECONDS);
            fail("expected " + type.getSimpleName() + " but completed with " + r);
            return null;
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (!type.isInstance(c)) {
                throw new AssertionError("expected " + type.getSimpleName() + " but got " + c, c);
            }
            return type.cast(c);
        }
    }

    private static final Set<String> BLOCKING_FRAMES = Set.of("park", "parkNanos", "wait", "poll", "poll0", "epollWait",
            "read0", "readv0", "write0", "writev0", "accept0", "accept", "connect0", "await", "sleep");

    /** Waits (bounded) until {@code t} is blocked in a wait; a stack sample, as no API tells it exactly. */
    static void awaitBlocked(Thread t, String where) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        int seen = 0;
        while (System.nanoTime() - deadline < 0) {
            StackTraceElement[] st = t.getStackTrace();
            boolean inWait = false;
            boolean inCall = false;
            for (StackTraceElement e : st) {
                inWait |= BLOCKING_FRAMES.contains(e.getMethodName());
                inCall |= e.getMethodName().equals(where);
            }
            if (inWait && inCall && ++seen >= 3) {
                return;
            }
            if (!t.isAlive()) {
                return;
            }
            Thread.sleep(5);
        }
        fail(t.getName() + " did not block in " + where + " within " + WAIT_SECONDS + " s");
    }

    static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        int x = seed * 31 + 7;
        for (int i = 0; i < n; i++) {
            x = x * 1103515245 + 12345;
            b[i] = (byte) (x >>> 16);
        }
        return b;
    }

    static boolean remaining(ByteBuffer[] bufs) {
        for (ByteBuffer b : bufs) {
            if (b.hasRemaining()) {
                return true;
            }
        }
        return false;
    }

    /** Writes every byte, in blocking mode or through a selector in non-blocking mode. */
    void writeFully(SocketChannel ch, ByteBuffer... srcs) throws IOException {
        if (ch.isBlocking()) {
            while (remaining(srcs)) {
                ch.write(srcs);
            }
            return;
        }
        try (Selector sel = provider().openSelector()) {
            SelectionKey k = ch.register(sel, SelectionKey.OP_WRITE);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (remaining(srcs)) {
                if (ch.write(srcs) == 0) {
                    assertTrue(System.nanoTime() - deadline < 0, "write made no progress in time");
                    sel.select(1000);
                    sel.selectedKeys().clear();
                }
            }
            k.cancel();
            sel.selectNow();
        }
    }

    /** Reads until the buffers are full (or end of stream); returns the bytes read. */
    long readFully(SocketChannel ch, ByteBuffer... dsts) throws IOException {
        long total = 0;
        if (ch.isBlocking()) {
            while (remaining(dsts)) {
                long n = ch.read(dsts);
                if (n < 0) {
                    break;
                }
                total += n;
            }
            return total;
        }
        try (Selector sel = provider().openSelector()) {
            SelectionKey k = ch.register(sel, SelectionKey.OP_READ);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (remaining(dsts)) {
                long n = ch.read(dsts);
                if (n < 0) {
                    break;
                }
                total += n;
                if (n == 0) {
                    assertTrue(System.nanoTime() - deadline < 0, "read made no progress in time");
                    sel.select(1000);
                    sel.selectedKeys().clear();
                }
            }
            k.cancel();
            sel.selectNow();
        }
        return total;
    }

    /** Reads until end of stream, bounded; returns -1 once seen. */
    int readToEnd(SocketChannel ch) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(4096);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        Selector sel = ch.isBlocking() ? null : selector();
        if (sel != null) {
            ch.register(sel, SelectionKey.OP_READ);
        }
        while (System.nanoTime() - deadline < 0) {
            b.clear();
            int n = ch.read(b);
            if (n < 0) {
                return n;
            }
            if (n == 0 && sel != null) {
                sel.select(1000);
                sel.selectedKeys().clear();
            }
        }
        return fail("no end of stream within " + WAIT_SECONDS + " s");
    }

    /** Selects (bounded) until {@code key} is selected with all of {@code ops}. */
    static void selectUntil(Selector sel, SelectionKey key, int ops) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (System.nanoTime() - deadline < 0) {
            sel.select(1000);
            if (sel.selectedKeys().contains(key) && (key.readyOps() & ops) == ops) {
                return;
            }
        }
        fail("key not selected for ops " + ops + " within " + WAIT_SECONDS + " s: " + key);
    }

    /** A port on this address where nothing listens (a server bound, then closed). */
    int deadPort() throws IOException {
        try (ServerSocketChannel s = provider().openServerSocketChannel()) {
            s.bind(new InetSocketAddress(address(), 0));
            return ((InetSocketAddress) s.getLocalAddress()).getPort();
        }
    }

}
