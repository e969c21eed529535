package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmanio.core.fabric.Completions;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** Fabric faults end the connection they hit, promptly and with a named cause, and no other. */
class FaultsTest {

    private static final EngineConfig CONFIG = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(4);

    private static void assertEchoes(Pair p, FabricConnection[] cs) throws IOException {
        Pair.write(cs[0], ByteBuffer.wrap(new byte[] {4, 5, 6}));
        ByteBuffer got = ByteBuffer.allocate(3);
        p.await("bytes on a healthy connection", () -> {
            try {
                Pair.read(cs[1], got);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
            return !got.hasRemaining();
        });
        assertArrayEquals(new byte[] {4, 5, 6}, got.array());
    }

    /** Reads until an IOException or -1; returns the exception or null for -1. */
    private static IOException awaitEnd(Pair p, Connection c) {
        IOException[] seen = new IOException[1];
        p.await("the end of " + c, () -> {
            try {
                return Pair.read(c, ByteBuffer.allocate(4096)) == -1;
            } catch (IOException e) {
                seen[0] = e;
                return true;
            }
        });
        return seen[0];
    }

    @Test
    void aDroppedConnectionEndsReadsAndWritesOnBothSides() throws Exception {
        try (Pair p = new Pair(CONFIG)) {
            FabricConnection[] other = p.connect();
            FabricConnection[] cs = p.connect();
            int free = p.server.pool().freeSlots();
            Pair.write(cs[0], ByteBuffer.allocate(3000));
            Pair.write(cs[1], ByteBuffer.allocate(3000));
            p.pump();
            p.fabric.faults().dropConnection(cs[0].qpNum());
            IOException a = awaitEnd(p, cs[0]);
            IOException b = awaitEnd(p, cs[1]);
            assertEquals("Connection reset", a.getMessage(), "a read reports the reset as the JDK does");
            assertEquals("Connection reset", b.getMessage(), "a read reports the reset as the JDK does");
            assertThrows(IOException.class, () -> Pair.write(cs[0], ByteBuffer.allocate(1)));
            assertThrows(IOException.class, () -> Pair.write(cs[1], ByteBuffer.allocate(1)));
            assertNotEquals(0, cs[1].readyOps() & Readiness.READ, "a failure is reported as readable");
            assertEchoes(p, other);
            p.await("slots back", () -> p.server.pool().freeSlots() == free + 0 || cs[1].isTornDown());
            cs[0].close();
            cs[1].close();
            p.await("teardown", () -> cs[0].isTornDown() && cs[1].isTornDown());
            assertEquals(0, p.fabric.receiverNotReadyCount());
        }
    }

    @Test
    void anInjectedCompletionErrorFailsOnlyThatConnection() throws Exception {
        try (Pair p = new Pair(CONFIG)) {
            FabricConnection[] other = p.connect();
            FabricConnection[] cs = p.connect();
            long failed = p.client.stats().connectionsFailed();
            p.fabric.faults().failWorkRequest(cs[0].qpNum(), 2, Completions.REM_OP_ERR);
            for (int i = 0; i < 4; i++) {
                try {
                    Pair.write(cs[0], ByteBuffer.allocate(100));
                } catch (IOException e) {
                    break;
                }
                p.pump();
            }
            IOException a = awaitEnd(p, cs[0]);
            assertNotNull(a);
            assertTrue(a.getMessage().contains("remote operation error"), a.getMessage());
            IOException b = awaitEnd(p, cs[1]);
            assertEquals("Connection reset", b.getMessage(), "a read reports the reset as the JDK does");
            assertEquals(failed + 1, p.client.stats().connectionsFailed());
            assertEchoes(p, other);
            cs[0].close();
            cs[1].close();
            other[0].close();
            other[1].close();
            p.await("teardown", () -> p.client.pool().slotsInUse() == 0 && p.server.pool().slotsInUse() == 0);
        }
    }

    /**
     * A send nobody took (RETRY_EXC_ERR: the peer's process ended, or, on a device, retries nobody acknowledged)
     * ends the connection as the kernel ends a TCP connection whose peer went away: a reset, reported to a read as
     * "Connection reset", not a fabric status; other connections go on.
     */
    @Test
    void aSendThePeerNeverTookIsAReset() throws Exception {
        try (Pair p = new Pair(CONFIG)) {
            FabricConnection[] other = p.connect();
            FabricConnection[] cs = p.connect();
            p.fabric.faults().failWorkRequest(cs[0].qpNum(), 2, Completions.RETRY_EXC_ERR);
            IOException byWrite = null;
            for (int i = 0; i < 4 && byWrite == null; i++) {
                try {
                    Pair.write(cs[0], ByteBuffer.allocate(100));
                } catch (IOException e) {
                    byWrite = e;
                }
                p.pump();
            }
            IOException byRead = awaitEnd(p, cs[0]);
            if (byWrite != null) {
                // Reported to a write first, as Linux reports ECONNRESET once: reads then see end of stream.
                assertEquals("Connection reset by peer", byWrite.getMessage(), "a write reports the reset");
                assertNull(byRead, "end of stream after the reset a write reported");
            } else {
                assertNotNull(byRead, "the writer's connection failed");
                assertEquals("Connection reset", byRead.getMessage(), "a read reports the reset as the JDK does");
                IOException again = assertThrows(IOException.class,
                    () -> Pair.write(cs[0], ByteBuffer.allocate(1)));
                assertEquals("Broken pipe", again.getMessage(), "a write after the reported reset");
            }
            assertNotNull(awaitEnd(p, cs[1]), "the other side ends too");
            assertEchoes(p, other);
            cs[0].close();
            cs[1].close();
        }
    }

    /**
     * A reset that a write's own progress finds after the write took bytes: the write returns their count, and the
     * reset is the next call's to report. A read then reports "Connection reset", as TCP's; the reset is never
     * counted as reported by a write nobody saw fail (reads would then see end of stream).
     */
    @Test
    void aResetFoundByAWriteThatTookBytesIsReportedByTheNextRead() throws Exception {
        try (Pair p = new Pair(CONFIG)) {
            FabricConnection[] cs = p.connect();
            p.fabric.faults().failWorkRequest(cs[0].qpNum(), 1, Completions.RETRY_EXC_ERR);
            int size = 32 << 20;
            long n = Pair.write(cs[0], ByteBuffer.allocate(size));
            assertTrue(n > 0 && n < size, "the write took part of its bytes: " + n);
            IOException byRead = awaitEnd(p, cs[0]);
            assertNotNull(byRead, "a read reports the reset, not end of stream");
            assertEquals("Connection reset", byRead.getMessage());
            IOException again = assertThrows(IOException.class, () -> Pair.write(cs[0], ByteBuffer.allocate(1)));
            assertEquals("Broken pipe", again.getMessage(), "a write after the reported reset");
            cs[0].close();
            cs[1].close();
        }
    }

    @Test
    void receiverNotReadyIsCountedAndNamed() throws Exception {
        try (Pair p = new Pair(CONFIG)) {
            FabricConnection[] cs = p.connect();
            // A frozen receiver withholds every receive it posts from now on: once the engine has used up the
            // receives posted before, a send it is entitled to make finds none.
            p.fabric.faults().freezeReceives(cs[1].qpNum());
            IOException[] seen = new IOException[1];
            p.await("receiver not ready", () -> {
                try {
                    Pair.write(cs[0], ByteBuffer.allocate(10));
                    Pair.read(cs[1], ByteBuffer.allocate(100));
                    Pair.read(cs[0], ByteBuffer.allocate(100));
                    return false;
                } catch (IOException e) {
                    seen[0] = e;
                    return true;
                }
            });
            IOException a = awaitEnd(p, cs[0]);
            assertNotNull(a);
            assertTrue(a.getMessage().contains("receiver not ready"), a.getMessage());
            assertEquals(1, p.client.stats().receiverNotReady());
            assertEquals(1, p.fabric.receiverNotReadyCount());
        }
    }
}
