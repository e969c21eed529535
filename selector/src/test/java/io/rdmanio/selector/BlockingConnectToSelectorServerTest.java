package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.engine.Engines;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Connection churn between two threads of one JVM on one engine: a server thread serving accepts and one-byte
 * answers from a selector, and a client thread doing blocking connects, each sending one byte, waiting for the
 * answer and closing first (the server closes when it reads the end of stream). Each side blocks only when the
 * other owes it something, so every cycle must finish; a cycle that stalls is a lost wakeup and fails the test
 * with every thread's stack.
 */
class BlockingConnectToSelectorServerTest {

    private static final int CYCLES = 5000;
    private static final long CYCLE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final SelectorProvider provider = new RdmaSelectorProvider(TestRouting.fabricFor(
            a -> a.getAddress().isLoopbackAddress(), (peer, listening) -> Engines.get("loopback"), "loopback"));

    @Test
    void blockingConnectsToASelectorServerNeverHang() throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong done = new AtomicLong();
        try (ServerSocketChannel server = provider.openServerSocketChannel();
             Selector sel = provider.openSelector()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0), 64);
            server.configureBlocking(false);
            server.register(sel, SelectionKey.OP_ACCEPT);
            InetSocketAddress address = (InetSocketAddress) server.getLocalAddress();
            Thread serving = new Thread(() -> {
                try {
                    serve(sel);
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "wakeup-selector-server");
            Thread client = new Thread(() -> {
                try {
                    ByteBuffer hello = ByteBuffer.allocateDirect(1);
                    ByteBuffer answer = ByteBuffer.allocateDirect(1);
                    for (int i = 0; i < CYCLES; i++) {
                        try (SocketChannel ch = provider.openSocketChannel()) {
                            ch.connect(address);
                            hello.clear().put(0, (byte) i);
                            while (hello.hasRemaining()) {
                                ch.write(hello);
                            }
                            answer.clear();
                            while (answer.position() == 0) {
                                if (ch.read(answer) < 0) {
                                    throw new ProtocolException("the server closed before it answered in cycle " + i);
                                }
                            }
                            assertEquals((byte) (i + 1), answer.get(0), "answer of cycle " + i);
                        }
                        done.incrementAndGet();
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "wakeup-blocking-client");
            serving.setDaemon(true);
            client.setDaemon(true);
            serving.start();
            client.start();
            try {
                long last = -1;
                long since = System.nanoTime();
                while (client.isAlive() && failure.get() == null) {
                    client.join(100);
                    long now = done.get();
                    if (now != last) {
                        last = now;
                        since = System.nanoTime();
                    } else if (System.nanoTime() - since > CYCLE_TIMEOUT_NANOS) {
                        fail("cycle " + now + " of " + CYCLES + " made no progress for "
                            + TimeUnit.NANOSECONDS.toSeconds(CYCLE_TIMEOUT_NANOS) + " s (a lost wakeup); threads:\n"
                            + dumpThreads());
                    }
                }
                if (failure.get() != null) {
                    throw new AssertionError("after " + done.get() + " cycles", failure.get());
                }
                assertEquals(CYCLES, done.get());
            } finally {
                serving.interrupt();
                sel.wakeup();
                serving.join(10_000);
            }
        }
    }

    /** Accepts, answers each byte with the next value, and closes at the end of stream. */
    private static void serve(Selector sel) throws IOException {
        ByteBuffer in = ByteBuffer.allocateDirect(16);
        ByteBuffer out = ByteBuffer.allocateDirect(1);
        while (!Thread.currentThread().isInterrupted()) {
            sel.select();
            Iterator<SelectionKey> it = sel.selectedKeys().iterator();
            while (it.hasNext()) {
                SelectionKey k = it.next();
                it.remove();
                if (!k.isValid()) {
                    continue;
                }
                if (k.isAcceptable()) {
                    SocketChannel c = ((ServerSocketChannel) k.channel()).accept();
                    if (c != null) {
                        c.configureBlocking(false);
                        c.register(sel, SelectionKey.OP_READ);
                    }
                } else if (k.isReadable()) {
                    SocketChannel c = (SocketChannel) k.channel();
                    in.clear();
                    int n = c.read(in);
                    if (n < 0) {
                        c.close();
                    } else if (n > 0) {
                        out.clear().put(0, (byte) (in.get(n - 1) + 1));
                        c.write(out);
                    }
                }
            }
        }
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
