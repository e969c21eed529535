package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.ResourceLimitException;
import io.rdmanio.core.fabric.loopback.LoopbackFabric;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A server that reaches a limit while accepting refuses the request naming the limit, so the client's
 * {@code ConnectException} says why (not "the request was dropped"), and the server goes on serving once memory is
 * there again.
 */
class LimitRejectionTest {

    private static final EngineConfig SMALL = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(4);

    /** The loopback fabric, except that {@link #allocate} fails with a limit while {@link #budget} is 0. */
    private static final class LimitedFabric implements Fabric {
        final LoopbackFabric delegate;
        final AtomicInteger budget = new AtomicInteger();

        LimitedFabric(LoopbackFabric delegate) {
            this.delegate = delegate;
        }

        @Override
        public String name() {
            return delegate.name();
        }

        @Override
        public MemoryRegion register(ByteBuffer buffer, int access) throws IOException {
            return delegate.register(buffer, access);
        }

        @Override
        public MemoryRegion allocate(int length, int access) throws IOException {
            if (budget.getAndUpdate(b -> Math.max(0, b - 1)) == 0) {
                throw new ResourceLimitException("test regions 0", "the test allows no more regions", null);
            }
            return delegate.allocate(length, access);
        }

        @Override
        public CompletionQueue createCompletionQueue(int entries) throws IOException {
            return delegate.createCompletionQueue(entries);
        }

        @Override
        public EventChannel createEventChannel() throws IOException {
            return delegate.createEventChannel();
        }

        @Override
        public CmId createId(EventChannel events) throws IOException {
            return delegate.createId(events);
        }

        @Override
        public void close() {
            // the test closes the delegate
        }
    }

    @Test
    void theClientIsToldWhichLimitTheServerReached() throws Exception {
        LoopbackFabric fabric = LoopbackFabric.open(1L);
        LimitedFabric limited = new LimitedFabric(fabric);
        try (Engine client = Engines.open(fabric, SMALL); Engine server = Engines.open(limited, SMALL)) {
            Listener listener = server.listen(new InetSocketAddress("127.0.0.1", 0), 16, ConnectionOptions.DEFAULT);
            Connection refused = client.connect(listener.localAddress(), ConnectionOptions.DEFAULT);
            ConnectException e = assertThrows(ConnectException.class, () -> finish(client, server, refused));
            assertTrue(e.getMessage().contains("the server reached a limit: test regions 0"), e.getMessage());
            assertEquals(null, listener.accept());
            // Memory again: the same listener accepts, and bytes cross.
            limited.budget.set(1);
            Connection c = client.connect(listener.localAddress(), ConnectionOptions.DEFAULT);
            finish(client, server, c);
            Connection s = listener.accept();
            assertTrue(s != null);
            assertEquals(3, c.write(new ByteBuffer[] {ByteBuffer.wrap(new byte[] {1, 2, 3})}, 0, 1));
            ByteBuffer in = ByteBuffer.allocate(3);
            long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS;
            while (in.hasRemaining()) {
                if (s.read(new ByteBuffer[] {in}, 0, 1) == 0) {
                    client.progress();
                    server.progress();
                }
                if (System.nanoTime() - deadline > 0) {
                    fail("no bytes within the timeout");
                }
            }
            assertEquals(ByteBuffer.wrap(new byte[] {1, 2, 3}), in.flip());
            c.close();
            s.close();
            listener.close();
        } finally {
            fabric.close();
        }
    }

    /** Drives both engines until {@code c} is connected (or its connect fails, thrown). */
    private static void finish(Engine client, Engine server, Connection c) throws IOException {
        long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS;
        while (!c.finishConnect()) {
            client.progress();
            server.progress();
            if (System.nanoTime() - deadline > 0) {
                fail("the connect neither finished nor failed within the timeout");
            }
        }
    }
}
