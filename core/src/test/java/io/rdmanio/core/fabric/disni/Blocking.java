package io.rdmanio.core.fabric.disni;

import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.Listener;
import io.rdmanio.core.engine.Readiness;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/** Blocking use of the engine's non-blocking API, each wait bounded (the engine parks through the fabric). */
final class Blocking {

    static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(120);

    private Blocking() {
    }

    /** Connects; the server's engine must make progress meanwhile (another process, or a thread accepting). */
    static Connection connect(Engine engine, InetSocketAddress remote) throws IOException {
        return finishConnect(engine.connect(remote, null));
    }

    static Connection finishConnect(Connection c) throws IOException {
        InetSocketAddress remote = c.remoteAddress();
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        while (!c.finishConnect()) {
            c.await(Readiness.CONNECT, deadline - System.nanoTime());
            if (System.nanoTime() - deadline > 0) {
                fail("connect to " + remote + " timed out");
            }
        }
        return c;
    }

    static Connection accept(Listener l) throws IOException {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        for (;;) {
            Connection c = l.accept();
            if (c != null) {
                return c;
            }
            l.await(Readiness.ACCEPT, deadline - System.nanoTime());
            if (System.nanoTime() - deadline > 0) {
                fail("accept timed out");
            }
        }
    }

    static void writeFully(Connection c, ByteBuffer b) throws IOException {
        ByteBuffer[] one = {b};
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        while (b.hasRemaining()) {
            if (c.write(one, 0, 1) == 0) {
                c.await(Readiness.WRITE, deadline - System.nanoTime());
                if (System.nanoTime() - deadline > 0) {
                    fail("write timed out with " + b.remaining() + " bytes left");
                }
            }
        }
    }

    /** Reads at least one byte; -1 at end of stream. */
    static int read(Connection c, ByteBuffer b) throws IOException {
        ByteBuffer[] one = {b};
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        for (;;) {
            long n = c.read(one, 0, 1);
            if (n != 0) {
                return (int) n;
            }
            c.await(Readiness.READ, deadline - System.nanoTime());
            if (System.nanoTime() - deadline > 0) {
                fail("read timed out");
            }
        }
    }

    static void readFully(Connection c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (read(c, b) < 0) {
                fail("end of stream with " + b.remaining() + " bytes still expected");
            }
        }
    }
}
