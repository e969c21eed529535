package io.rdmanio.core.engine;

import static io.rdmanio.core.engine.Pair.read;
import static io.rdmanio.core.engine.Pair.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A thread that stops waiting leaves nothing armed for it: whether its wait timed out, was interrupted or was
 * ended by a local close, the engine no longer counts it as a waiter and withdraws the relayed arms it asked for
 * (on a fabric with a completion thread, a relayed arm keeps that thread standing by on the device). A later wait
 * arms again and is woken as before.
 */
class RelayWithdrawalTest {

    private static final EngineConfig SMALL = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(4);

    @Test
    void aTimedOutWaitLeavesNothingArmedAndALaterWaitIsStillWoken() throws Exception {
        try (Pair p = new Pair(SMALL)) {
            FabricConnection[] cs = p.connect();
            FabricConnection s = cs[1];
            assertEquals(0, s.await(Readiness.READ, TimeUnit.MILLISECONDS.toNanos(20)), "nothing was sent");
            assertTrue(p.server.isWaitIdle(), "the timed-out wait left a waiter or a relayed arm behind");

            CompletableFuture<Integer> woken = new CompletableFuture<>();
            Thread reader = new Thread(() -> {
                try {
                    woken.complete(s.await(Readiness.READ, Pair.TIMEOUT_NANOS));
                } catch (Throwable t) {
                    woken.completeExceptionally(t);
                }
            }, "relay-reader");
            reader.start();
            awaitParked(reader);
            assertEquals(1, write(cs[0], ByteBuffer.wrap(new byte[] {7})));
            assertEquals(Readiness.READ, woken.get(Pair.TIMEOUT_NANOS, TimeUnit.NANOSECONDS) & Readiness.READ);
            reader.join();
            ByteBuffer in = ByteBuffer.allocate(1);
            assertEquals(1, read(s, in));
            assertEquals(7, in.get(0));
            assertTrue(p.server.isWaitIdle(), "the woken wait left a waiter or a relayed arm behind");
        }
    }

    @Test
    void anInterruptedWaitLeavesNothingArmed() throws Exception {
        try (Pair p = new Pair(SMALL)) {
            FabricConnection s = p.connect()[1];
            CompletableFuture<Integer> woken = new CompletableFuture<>();
            Thread reader = new Thread(() -> awaitRead(s, woken), "relay-interrupted");
            reader.start();
            awaitParked(reader);
            reader.interrupt();
            assertEquals(0, woken.get(Pair.TIMEOUT_NANOS, TimeUnit.NANOSECONDS), "the interrupted wait saw no read");
            reader.join();
            assertTrue(p.server.isWaitIdle(), "the interrupted wait left a waiter or a relayed arm behind");
        }
    }

    @Test
    void aWaitEndedByALocalCloseLeavesNothingArmed() throws Exception {
        try (Pair p = new Pair(SMALL)) {
            FabricConnection[] cs = p.connect();
            FabricConnection s = cs[1];
            CompletableFuture<Integer> woken = new CompletableFuture<>();
            Thread reader = new Thread(() -> awaitRead(s, woken), "relay-closed");
            reader.start();
            awaitParked(reader);
            s.close();
            woken.get(Pair.TIMEOUT_NANOS, TimeUnit.NANOSECONDS);
            reader.join();
            p.await("the closed connection's teardown", s::isTornDown);
            assertTrue(p.server.isWaitIdle(), "the wait ended by a close left a waiter or a relayed arm behind");
        }
    }

    private static void awaitRead(FabricConnection c, CompletableFuture<Integer> result) {
        try {
            result.complete(c.await(Readiness.READ, Pair.TIMEOUT_NANOS));
        } catch (Throwable t) {
            result.completeExceptionally(t);
        }
    }

    /** Waits until {@code t} parks in its wait (past the engine's spin). */
    private static void awaitParked(Thread t) {
        long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS;
        while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING) {
            if (!t.isAlive() || System.nanoTime() - deadline > 0) {
                throw new AssertionError(t.getName() + " did not park: " + t.getState());
            }
            Thread.onSpinWait();
        }
    }
}
