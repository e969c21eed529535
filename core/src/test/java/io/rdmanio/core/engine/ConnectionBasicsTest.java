package io.rdmanio.core.engine;

import static io.rdmanio.core.engine.Pair.read;
import static io.rdmanio.core.engine.Pair.write;
import static org.junit.jupiter.api.Assertions.*;

import io.netty.buffer.ByteBuf;
import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.Fabrics;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ConnectionBasicsTest {

    private static final EngineConfig SMALL = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(4);

    @Test
    void bytesCrossBothWaysAndFinEndsTheStream() throws Exception {
        try (Pair p = new Pair(SMALL)) {
            int clientSlots = p.client.pool().slotsInUse();
            int serverSlots = p.server.pool().slotsInUse();
            assertEquals(0, clientSlots);
            FabricConnection[] cs = p.connect();
            FabricConnection c = cs[0];
            FabricConnection s = cs[1];
            assertTrue(c.isConnected());
            assertEquals(p.listener.localAddress(), c.remoteAddress());
            assertEquals(5, write(c, ByteBuffer.wrap("hello".getBytes(StandardCharsets.US_ASCII))));
            ByteBuffer in = ByteBuffer.allocate(16);
            p.await("hello", () -> {
                try {
                    read(s, in);
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
                return in.position() == 5;
            });
            assertEquals("hello", new String(in.array(), 0, 5, StandardCharsets.US_ASCII));
            write(s, ByteBuffer.wrap("world!".getBytes(StandardCharsets.US_ASCII)));
            s.shutdownOutput();
            ByteBuffer back = ByteBuffer.allocate(16);
            long[] last = new long[1];
            p.await("world and EOF", () -> {
                try {
                    last[0] = read(c, back);
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
                return last[0] == -1;
            });
            assertEquals("world!", new String(back.array(), 0, back.position(), StandardCharsets.US_ASCII));
            assertThrows(IOException.class, () -> write(s, ByteBuffer.allocate(1)));
            c.close();
            s.close();
            p.await("teardown", () -> c.isTornDown() && s.isTornDown());
            assertEquals(0, p.client.pool().slotsInUse());
            assertEquals(0, p.server.pool().slotsInUse());
            assertEquals(0, p.fabric.receiverNotReadyCount());
            assertEquals(0, p.client.stats().receiverNotReady());
        }
    }

    @Test
    void writeReturnsZeroForASlowReaderAndWriteReadinessReturnsWhenItDrains() throws Exception {
        // The reader's window is its ring alone (SO_RCVBUF set, as a TCP test pins its buffer): a reader that
        // neither reads nor waits may otherwise spill its ring in the background and reopen the window.
        try (Pair p = new Pair(SMALL, 1L, false, Pair.ringOnly(SMALL))) {
            FabricConnection[] cs = p.connect(new ConnectionOptions(0, 2048));
            FabricConnection c = cs[0];
            FabricConnection s = cs[1];
            int[] fired = new int[1];
            c.addReadinessListener(src -> fired[0]++);
            long total = 0;
            ByteBuffer chunk = ByteBuffer.allocate(700);
            for (int i = 0; i < 1000; i++) {
                chunk.clear();
                long n = write(c, chunk);
                p.pump();
                if (n == 0) {
                    break;
                }
                total += n;
            }
            chunk.clear();
            assertEquals(0, write(c, chunk), "the reader never read: staging and credit must run out");
            assertEquals(0, c.readyOps() & Readiness.WRITE);
            assertTrue(p.client.stats().creditStalls() > 0);
            int before = fired[0];
            ByteBuffer sink = ByteBuffer.allocate(1 << 16);
            long[] got = new long[1];
            p.await("WRITE readiness", () -> {
                try {
                    sink.clear();
                    got[0] += Math.max(0, read(s, sink));
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
                return (c.readyOps() & Readiness.WRITE) != 0;
            });
            assertTrue(fired[0] > before, "the readiness listener heard of WRITE");
            assertTrue(write(c, ByteBuffer.allocate(10)) > 0);
            assertTrue(total > 0);
        }
    }

    @Test
    void abortResetsThePeer() throws Exception {
        try (Pair p = new Pair(SMALL)) {
            FabricConnection[] cs = p.connect();
            write(cs[0], ByteBuffer.allocate(100));
            cs[0].abort();
            IOException e = p.awaitFailure(cs[1]);
            assertEquals("Connection reset", e.getMessage(), "a read reports the reset as the JDK does");
            assertThrows(IOException.class, () -> write(cs[1], ByteBuffer.allocate(1)));
            cs[1].close();
            p.await("teardown", () -> cs[0].isTornDown() && cs[1].isTornDown());
            assertEquals(0, p.client.pool().slotsInUse());
            assertEquals(0, p.server.pool().slotsInUse());
        }
    }

    @Test
    void connectWithNoListenerIsRefused() throws Exception {
        try (Pair p = new Pair(SMALL)) {
            Connection c = p.client.connect(new InetSocketAddress("127.0.0.1", 9), ConnectionOptions.DEFAULT);
            ConnectException[] e = new ConnectException[1];
            p.await("refusal", () -> {
                try {
                    assertFalse(c.finishConnect());
                    return false;
                } catch (ConnectException x) {
                    e[0] = x;
                    return true;
                } catch (IOException x) {
                    throw new AssertionError(x);
                }
            });
            assertTrue(e[0].getMessage().startsWith("Connection refused: "), e[0].getMessage());
            c.close();
            p.await("teardown", () -> p.client.pool().slotsInUse() == 0);
        }
    }

    @Test
    void slotSizeMismatchIsRejectedNamingBothValues() throws Exception {
        try (Pair p = new Pair(SMALL)) {
            FabricEngine other = (FabricEngine) Engines.open(p.fabric, SMALL.withSlotSize(2048));
            try {
                Connection c = other.connect(p.listener.localAddress(), ConnectionOptions.DEFAULT);
                ConnectException[] e = new ConnectException[1];
                p.await("rejection", () -> {
                    other.progress();
                    try {
                        c.finishConnect();
                        return false;
                    } catch (ConnectException x) {
                        e[0] = x;
                        return true;
                    } catch (IOException x) {
                        throw new AssertionError(x);
                    }
                });
                assertEquals("rdmanio handshake rejected by " + p.listener.localAddress()
                    + ": slot size 2048 not accepted (server uses 1024)", e[0].getMessage());
                c.close();
                assertEquals(0, other.pool().slotsInUse());
            } finally {
                other.close();
            }
        }
    }

    @Test
    void zeroCopyLoansReturnTheirSlots() throws Exception {
        try (Pair p = new Pair(SMALL)) {
            FabricConnection[] cs = p.connect();
            byte[] msg = "zero-copy".getBytes(StandardCharsets.US_ASCII);
            write(cs[0], ByteBuffer.wrap(msg));
            ByteBuf[] got = new ByteBuf[1];
            p.await("a loan", () -> {
                try {
                    got[0] = cs[1].readBuffer();
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
                return got[0] != null;
            });
            assertEquals("zero-copy", got[0].toString(StandardCharsets.US_ASCII));
            assertTrue(got[0].isDirect());
            assertEquals(1, got[0].refCnt());
            assertTrue(got[0].release());
            // The same slot is lent again later without allocating a new buffer: many round trips work.
            for (int i = 0; i < 50; i++) {
                // The credit for the next frame comes back when the receiver's returned loans are flushed: pump
                // until the write is taken, as a program would wait for OP_WRITE.
                ByteBuffer out = ByteBuffer.wrap(msg);
                p.await("room to write " + i, () -> {
                    try {
                        write(cs[0], out);
                    } catch (IOException e) {
                        throw new AssertionError(e);
                    }
                    return !out.hasRemaining();
                });
                got[0] = null;
                p.await("loan " + i, () -> {
                    try {
                        got[0] = cs[1].readBuffer();
                    } catch (IOException e) {
                        throw new AssertionError(e);
                    }
                    return got[0] != null;
                });
                assertEquals(msg.length, got[0].readableBytes());
                got[0].release();
            }
            cs[0].shutdownOutput();
            p.await("end of stream", () -> {
                try {
                    return cs[1].readBuffer() == ZeroCopyConnection.END_OF_STREAM;
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
        }
    }

    @Test
    void blockingAwaitIsWokenByAnotherThread() throws Exception {
        try (Pair p = new Pair(SMALL)) {
            FabricConnection[] cs = p.connect();
            CompletableFuture<Integer> waiter = CompletableFuture.supplyAsync(() -> {
                try {
                    return cs[1].await(Readiness.READ, 20_000_000_000L);
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            Thread.sleep(50);
            write(cs[0], ByteBuffer.allocate(10));
            // Nobody pumps here: the waiter drives progress itself once the fabric notifies it.
            assertEquals(Readiness.READ, waiter.get(20, TimeUnit.SECONDS));
            CompletableFuture<Integer> closed = CompletableFuture.supplyAsync(() -> {
                try {
                    return cs[0].await(Readiness.READ, Long.MAX_VALUE);
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            Thread.sleep(50);
            cs[0].close();
            assertEquals(0, closed.get(20, TimeUnit.SECONDS));
        }
    }

    @Test
    void configReadsSystemProperties() {
        System.setProperty("rdmanio.slotSize", "4096");
        System.setProperty("rdmanio.ringDepth", "8");
        try {
            EngineConfig c = EngineConfig.fromSystemProperties();
            assertEquals(4096, c.slotSize());
            assertEquals(8, c.ringDepth());
            assertEquals(2, c.controlSlots());
            assertEquals(50, c.spinMicros());
        } finally {
            System.clearProperty("rdmanio.slotSize");
            System.clearProperty("rdmanio.ringDepth");
        }
        System.setProperty("rdmanio.controlSlots", "1");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, EngineConfig::fromSystemProperties);
            assertEquals("rdmanio.controlSlots must be between 2 and 65536: 1", e.getMessage());
        } finally {
            System.clearProperty("rdmanio.controlSlots");
        }
    }

    @Test
    void aFabricsPreferredSlotSizeIsTheDefaultAndThePropertyWins() throws Exception {
        assertEquals(EngineConfig.DEFAULT_SLOT_SIZE, EngineConfig.fromSystemProperties().slotSize());
        assertEquals(65536, EngineConfig.fromSystemProperties(65536).slotSize());
        try (Fabric loopback = Fabrics.open("loopback", java.util.Map.of())) {
            assertEquals(0, loopback.preferredSlotSize(), "loopback keeps the engine's default");
        }
        System.setProperty("rdmanio.slotSize", "4096");
        try {
            assertEquals(4096, EngineConfig.fromSystemProperties(65536).slotSize());
        } finally {
            System.clearProperty("rdmanio.slotSize");
        }
    }

    @Test
    void enginesOpensOneEnginePerFabricName() throws Exception {
        Engine e = Engines.get("loopback");
        assertSame(e, Engines.get("loopback"));
        assertEquals("loopback", e.fabricName());
        IOException unknown = assertThrows(IOException.class, () -> Engines.get("no-such-fabric"));
        assertTrue(unknown.getMessage().contains("no-such-fabric"), unknown.getMessage());
        e.close();
        Engine again = Engines.get("loopback");
        assertNotSame(e, again);
        again.close();
    }

    @Test
    void anIdleWaiterParksWithoutATimeout() throws Exception {
        try (Pair p = new Pair(SMALL.withSpinMicros(0))) {
            FabricConnection[] cs = p.connect();
            int[] result = new int[1];
            Thread waiter = new Thread(() -> {
                try {
                    result[0] = cs[1].await(Readiness.READ, Long.MAX_VALUE);
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            }, "idle-waiter");
            waiter.start();
            // Parked with no deadline: WAITING, not TIMED_WAITING or RUNNABLE, so an idle JVM burns no CPU.
            long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS;
            while (waiter.getState() != Thread.State.WAITING) {
                assertTrue(System.nanoTime() - deadline < 0, "the waiter never parked: " + waiter.getState());
                Thread.onSpinWait();
            }
            write(cs[0], ByteBuffer.allocate(1));
            waiter.join(20_000);
            assertFalse(waiter.isAlive());
            assertEquals(Readiness.READ, result[0]);
        }
    }

    @Test
    void closeSendsPendingBytesThenFinWithoutBlocking() throws Exception {
        try (Pair p = new Pair(SMALL, 1L, false, Pair.ringOnly(SMALL))) {
            FabricConnection[] cs = p.connect();
            Streams s = new Streams(1 << 20, 3);
            ByteBuffer buf = ByteBuffer.allocate(4096);
            while (s.write(cs[0], buf, 4096) > 0) {
                p.pump();
            }
            assertTrue(s.written > 0 && s.written < s.total, "staging filled before the reader read");
            s.endHere();
            // Bytes are still staged for lack of credit: close returns at once and the engine finishes the job.
            cs[0].close();
            assertThrows(IOException.class, () -> write(cs[0], ByteBuffer.allocate(1)));
            ByteBuffer in = ByteBuffer.allocate(8192);
            p.await("every byte, then EOF", () -> {
                try {
                    return s.read(cs[1], in, 8192) == -1;
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            s.assertChecksumsMatch();
            cs[1].close();
            p.await("teardown", () -> cs[0].isTornDown() && cs[1].isTornDown());
            assertEquals(0, p.client.pool().slotsInUse());
            assertEquals(0, p.server.pool().slotsInUse());
        }
    }

    @Test
    void closeCompletesWithoutTheApplicationDrivingThatEngineAgain() throws Exception {
        try (Pair p = new Pair(SMALL, 1L, false, Pair.ringOnly(SMALL))) {
            FabricConnection[] cs = p.connect();
            Streams s = new Streams(1 << 20, 4);
            ByteBuffer buf = ByteBuffer.allocate(4096);
            while (s.write(cs[0], buf, 4096) > 0) {
                p.pump();
            }
            s.endHere();
            cs[0].close();
            // From here only the server's engine is driven by this thread; the client's engine finishes the
            // close (staged bytes, FIN, teardown) on its own.
            ByteBuffer in = ByteBuffer.allocate(8192);
            long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS;
            while (s.read(cs[1], in, 8192) != -1) {
                p.server.progress();
                assertTrue(System.nanoTime() - deadline < 0, "the closed side stopped sending");
            }
            s.assertChecksumsMatch();
            cs[1].close();
            while (!(cs[0].isTornDown() && cs[1].isTornDown())) {
                p.server.progress();
                assertTrue(System.nanoTime() - deadline < 0, "teardown did not happen");
                Thread.onSpinWait();
            }
            assertEquals(0, p.client.pool().slotsInUse());
            assertEquals(0, p.client.lingeringCount());
        }
    }

    @Test
    void aLoanOutlivingItsConnectionReturnsTheSlotToThePoolOnRelease() throws Exception {
        try (Pair p = new Pair(SMALL)) {
            FabricConnection[] cs = p.connect();
            write(cs[0], ByteBuffer.wrap(new byte[] {7, 8, 9}));
            ByteBuf[] got = new ByteBuf[1];
            p.await("a loan", () -> {
                try {
                    got[0] = cs[1].readBuffer();
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
                return got[0] != null;
            });
            cs[1].abort();
            cs[0].close();
            p.await("teardown", () -> cs[0].isTornDown() && cs[1].isTornDown());
            // The lent slot is still the application's: the rest went back.
            assertEquals(1, p.server.pool().slotsInUse());
            assertEquals(9, got[0].getByte(got[0].readerIndex() + 2));
            CompletableFuture.runAsync(() -> got[0].release()).get(20, TimeUnit.SECONDS);
            assertEquals(0, p.server.pool().slotsInUse());
        }
    }

    @Test
    void listenersHearOfEveryArrivalEvenWhileBytesAreLeftUnread() throws Exception {
        try (Pair p = new Pair(SMALL)) {
            FabricConnection[] cs = p.connect();
            int[] fired = new int[1];
            cs[1].addReadinessListener(src -> {
                assertSame(cs[1], src);
                fired[0]++;
            });
            write(cs[0], ByteBuffer.allocate(10));
            p.await("first arrival", () -> fired[0] == 1);
            assertEquals(Readiness.READ, cs[1].readyOps() & Readiness.READ);
            write(cs[0], ByteBuffer.allocate(10));
            p.await("second arrival, READ never cleared", () -> fired[0] == 2);
            ReadinessListener removed = src -> fail("removed listeners are not called");
            cs[1].addReadinessListener(removed);
            cs[1].removeReadinessListener(removed);
            write(cs[0], ByteBuffer.allocate(10));
            p.await("third arrival", () -> fired[0] == 3);
        }
    }
}
