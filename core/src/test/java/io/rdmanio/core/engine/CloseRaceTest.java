package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/** close() and abort() from one thread while others read, write and wait on the same connection. */
class CloseRaceTest {

    private static final EngineConfig CONFIG = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(2)
        .withSpinMicros(0);

    @RepeatedTest(20)
    void closeRacesWithABlockedWriterAndABlockedReader() throws Exception {
        try (Pair p = new Pair(CONFIG)) {
            FabricConnection[] cs = p.connect();
            FabricConnection c = cs[0];
            CountDownLatch start = new CountDownLatch(1);
            AtomicReference<Throwable> unexpected = new AtomicReference<>();
            Thread writer = new Thread(() -> {
                ByteBuffer b = ByteBuffer.allocate(4096);
                try {
                    start.await();
                    for (;;) {
                        b.clear();
                        if (c.write(new ByteBuffer[] {b}, 0, 1) == 0 && c.await(Readiness.WRITE, 10_000_000_000L) == 0
                            && c.isClosedLocally()) {
                            return;
                        }
                    }
                } catch (IOException expected) {
                    // Closed under it: the write reports it.
                } catch (Throwable t) {
                    unexpected.set(t);
                }
            }, "writer");
            Thread reader = new Thread(() -> {
                ByteBuffer b = ByteBuffer.allocate(4096);
                try {
                    start.await();
                    for (;;) {
                        b.clear();
                        long n = c.read(new ByteBuffer[] {b}, 0, 1);
                        if (n < 0) {
                            return;
                        }
                        if (n == 0 && c.await(Readiness.READ, 10_000_000_000L) == 0 && c.isClosedLocally()) {
                            return;
                        }
                    }
                } catch (IOException expected) {
                    // Closed under it.
                } catch (Throwable t) {
                    unexpected.set(t);
                }
            }, "reader");
            writer.start();
            reader.start();
            start.countDown();
            Thread.sleep(5);
            c.close();
            writer.join(20_000);
            reader.join(20_000);
            assertFalse(writer.isAlive(), "the writer is still blocked after close");
            assertFalse(reader.isAlive(), "the reader is still blocked after close");
            assertNull(unexpected.get());
            // The peer drains, sees EOF, closes; everything goes back to the pools.
            ByteBuffer sink = ByteBuffer.allocate(1 << 16);
            p.await("EOF at the peer", () -> {
                try {
                    sink.clear();
                    return Pair.read(cs[1], sink) == -1;
                } catch (IOException e) {
                    return true;
                }
            });
            cs[1].close();
            p.await("teardown", () -> p.client.pool().slotsInUse() == 0 && p.server.pool().slotsInUse() == 0);
            assertEquals(0, p.fabric.receiverNotReadyCount());
        }
    }

    @Test
    void awaitReturnsOnInterruptKeepingTheStatus() throws Exception {
        try (Pair p = new Pair(CONFIG)) {
            FabricConnection[] cs = p.connect();
            int[] result = {-1};
            boolean[] interrupted = new boolean[1];
            Thread t = new Thread(() -> {
                try {
                    result[0] = cs[1].await(Readiness.READ, Long.MAX_VALUE);
                    interrupted[0] = Thread.currentThread().isInterrupted();
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            t.start();
            long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS;
            while (t.getState() != Thread.State.WAITING) {
                assertTrue(System.nanoTime() - deadline < 0, "never parked");
                Thread.onSpinWait();
            }
            t.interrupt();
            t.join(20_000);
            assertFalse(t.isAlive());
            assertEquals(0, result[0]);
            assertTrue(interrupted[0]);
        }
    }
}
