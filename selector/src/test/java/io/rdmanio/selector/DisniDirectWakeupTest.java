package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.Engines;
import io.rdmanio.core.fabric.disni.DisniFabric;
import io.rdmanio.core.fabric.disni.DisniFabricProvider;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A select blocked on a disni connection is woken by the completion channel itself: the fabric's completion thread
 * stays parked from before the select blocks until the bytes have been read. Runs where an RDMA device exists (the
 * soft-RoCE VM, {@code native/vm/test-conformance.sh io.rdmanio.selector.DisniDirectWakeupTest}); skipped, with the
 * fabric's reason, elsewhere.
 */
class DisniDirectWakeupTest {

    private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(120);

    private static InetAddress rdmaAddress;
    private static SelectorProvider provider;

    @BeforeAll
    static void ensureDisniFabric() throws IOException {
        rdmaAddress = DisniFabricConformanceTest.rdmaAddressOrSkip();
        provider = DisniFabricConformanceTest.providerOn(rdmaAddress);
    }

    @Test
    void aBlockedSelectIsWokenByThePeersWriteWithoutTheCompletionThread() throws Exception {
        DisniFabric fabric = fabricOf(Engines.get(DisniFabricProvider.NAME));
        assertTrue(fabric.hasWakeupChannel(), "the disni fabric offers no wakeup channel (its debug log says why)");
        byte[] message = new byte[3000];
        for (int i = 0; i < message.length; i++) {
            message[i] = (byte) (i * 13 + (i >>> 7));
        }
        try (ServerSocketChannel server = provider.openServerSocketChannel();
             SocketChannel client = provider.openSocketChannel()) {
            server.bind(new InetSocketAddress(rdmaAddress, 0));
            assertTrue(client.connect(server.getLocalAddress()));
            try (SocketChannel accepted = server.accept();
                 Selector selector = provider.openSelector()) {
                accepted.configureBlocking(false);
                accepted.register(selector, SelectionKey.OP_READ);
                client.configureBlocking(false);
                assertEquals(0, selector.selectNow(), "nothing was sent yet");

                Thread completions = completionThread();
                awaitState(completions, Thread.State.WAITING, "the completion thread while nothing waits on it");
                long wakeups = fabric.completionThreadWakeups();

                CompletableFuture<Integer> selected = new CompletableFuture<>();
                Thread selecting = new Thread(() -> {
                    try {
                        selected.complete(selector.select(TimeUnit.NANOSECONDS.toMillis(TIMEOUT_NANOS)));
                    } catch (Throwable t) {
                        selected.completeExceptionally(t);
                    }
                }, "direct-wakeup-select");
                selecting.start();
                awaitBlockedInEpoll(selecting);

                ByteBuffer out = ByteBuffer.wrap(message);
                long deadline = System.nanoTime() + TIMEOUT_NANOS;
                while (out.hasRemaining()) {
                    if (client.write(out) == 0) {
                        if (System.nanoTime() - deadline > 0) {
                            throw new AssertionError("the client could not write " + out.remaining() + " bytes");
                        }
                        Thread.onSpinWait();
                    }
                }
                assertEquals(1, selected.get(TIMEOUT_NANOS, TimeUnit.NANOSECONDS),
                    "the blocked select returned without the accepted channel");
                selecting.join();
                assertEquals(wakeups, fabric.completionThreadWakeups(),
                    "the completion thread woke: the select was not woken by the completion channel");

                ByteBuffer in = ByteBuffer.allocate(message.length);
                while (in.hasRemaining()) {
                    if (accepted.read(in) == 0) {
                        if (System.nanoTime() - deadline > 0) {
                            throw new AssertionError("only " + in.position() + " of " + message.length + " bytes");
                        }
                        selector.select(1000);
                        selector.selectedKeys().clear();
                    }
                }
                assertArrayEquals(message, in.array());
                assertEquals(wakeups, fabric.completionThreadWakeups(), "the completion thread woke while reading");
            }
        }
    }

    /**
     * A blocking read that times out armed the engine's queues for a fabric thread to relay its wakeup; once it
     * stopped waiting nobody needs that relay, and the completion thread must go back to sleep instead of standing
     * by on the device for a notification nobody awaits.
     */
    @Test
    void aTimedOutBlockingReadLeavesTheCompletionThreadParked() throws Exception {
        try (ServerSocketChannel server = provider.openServerSocketChannel();
             SocketChannel client = provider.openSocketChannel()) {
            server.bind(new InetSocketAddress(rdmaAddress, 0));
            assertTrue(client.connect(server.getLocalAddress()));
            try (SocketChannel accepted = server.accept()) {
                Thread completions = completionThread();
                awaitState(completions, Thread.State.WAITING, "the completion thread before the read");
                Socket socket = accepted.socket();
                socket.setSoTimeout(200);
                InputStream in = socket.getInputStream();
                assertThrows(SocketTimeoutException.class, in::read, "nothing was sent");
                awaitState(completions, Thread.State.WAITING, "the completion thread after the read timed out");

                socket.setSoTimeout((int) TimeUnit.NANOSECONDS.toMillis(TIMEOUT_NANOS));
                assertEquals(1, client.write(ByteBuffer.wrap(new byte[] {42})));
                assertEquals(42, in.read(), "the byte sent after the timeout");
            }
        }
    }

    private static DisniFabric fabricOf(Engine engine) throws ReflectiveOperationException {
        Field f = engine.getClass().getDeclaredField("fabric");
        f.setAccessible(true);
        return (DisniFabric) f.get(engine);
    }

    /** The engine's lingering count and every connection it still knows, with their closing state. */
    private static String engineState() {
        try {
            Engine engine = Engines.get(DisniFabricProvider.NAME);
            java.lang.reflect.Method count = engine.getClass().getDeclaredMethod("lingeringCount");
            count.setAccessible(true);
            StringBuilder b = new StringBuilder("lingering " + count.invoke(engine));
            Field cf = engine.getClass().getDeclaredField("connections");
            cf.setAccessible(true);
            java.util.List<?> list;
            list = new java.util.ArrayList<>((java.util.List<?>) cf.get(engine));
            for (Object c : list) {
                b.append("\n  ").append(c);
                java.lang.reflect.Method cs = c.getClass().getDeclaredMethod("creditState");
                cs.setAccessible(true);
                b.append(" [").append(cs.invoke(c)).append("]");
                b.append(fields(c));
            }
            Object verbs = field(fabricOf(engine), "verbs");
            b.append("\n verbs:").append(fields(verbs));
            for (Object id : ((java.util.Map<?, ?>) field(verbs, "ids")).values()) {
                b.append("\n  ").append(id).append(fields(id));
            }
            for (Object q : (Object[]) field(engine, "cqs")) {
                b.append("\n  cq").append(fields(q)).append(" notifier=").append(field(q, "notifier"));
            }
            return b.toString();
        } catch (IOException | ReflectiveOperationException | RuntimeException e) {
            return "engine state unavailable: " + e;
        }
    }

    private static Object field(Object o, String name) throws ReflectiveOperationException {
        for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(o);
            } catch (NoSuchFieldException e) {
                // the superclass may declare it
            }
        }
        throw new NoSuchFieldException(name);
    }

    private static String fields(Object o) throws ReflectiveOperationException {
        StringBuilder b = new StringBuilder();
        for (Field f : o.getClass().getDeclaredFields()) {
            Class<?> t = f.getType();
            if (!java.lang.reflect.Modifier.isStatic(f.getModifiers()) && (t.isPrimitive()
                || t == IOException.class || t == java.util.concurrent.atomic.AtomicInteger.class)) {
                f.setAccessible(true);
                b.append(' ').append(f.getName()).append('=').append(f.get(o));
            }
        }
        return b.toString();
    }

    private static Thread completionThread() {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("rdmanio-disni-cq")) {
                return t;
            }
        }
        throw new AssertionError("the disni fabric's completion thread is not running");
    }

    private static void awaitState(Thread t, Thread.State state, String what) {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        while (t.getState() != state) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(what + " is " + t.getState() + ", not " + state + "; " + engineState()
                    + "; its stack: " + java.util.Arrays.toString(t.getStackTrace()));
            }
            Thread.onSpinWait();
        }
    }

    /** Waits until {@code t} blocks in the JDK's epoll wait (the inner select), past the engines' spin. */
    private static void awaitBlockedInEpoll(Thread t) {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        for (;;) {
            StackTraceElement[] stack = t.getStackTrace();
            if (stack.length > 0 && stack[0].getClassName().equals("sun.nio.ch.EPoll")
                && stack[0].getMethodName().equals("wait")) {
                return;
            }
            if (!t.isAlive() || System.nanoTime() - deadline > 0) {
                throw new AssertionError("the select did not block in epoll: " + java.util.Arrays.toString(stack));
            }
            Thread.onSpinWait();
        }
    }
}
