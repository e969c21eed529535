package io.rdmanio.core.fabric.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Listener;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Connections accepted from one peer share ring arenas: a connection takes a cell, a closed one gives it back, a
 * cell taken again carries nothing of the connection before it, and the arenas' descriptors close once no
 * connection with the peer is left. Two fabrics of one JVM stand for the two processes.
 */
class ShmRingArenaTest extends WithShmEngines {

    private static final int HELD = 200;
    private static final int CHURN = 200;

    private Listener listener;

    @BeforeEach
    void listen() throws IOException {
        listener = server.listen(new InetSocketAddress("127.0.0.1", 0), 1024, ConnectionOptions.DEFAULT);
    }

    @AfterEach
    void stopListening() {
        listener.close();
    }

    @Test
    void aCellRestsBeforeItIsTakenAgainAndComesBackZeroed() throws IOException {
        int length = ShmRingsDescriptor.fileLength(64, 64);
        ShmRingArena arena = ShmRingArena.create(serverFabric, length);
        try {
            List<ShmRingArena.Cell> taken = new ArrayList<>();
            ShmRingArena.Cell c;
            while ((c = arena.take(0)) != null) {
                taken.add(c);
            }
            assertEquals(arena.cells, taken.size(), "every fresh cell is handed out at once");
            ShmRingArena.Cell back = taken.get(5);
            for (int at = 0; at < length; at += 8) {
                back.rings.putLong(at, -1L);
            }
            long t = 1_000_000_000L;
            arena.release(back, t);
            assertEquals(null, arena.take(t + ShmRingArena.REST_NANOS - 1), "a cell given back rests first");
            ShmRingArena.Cell again = arena.take(t + ShmRingArena.REST_NANOS);
            assertEquals(5, again.index);
            assertEquals(5 * length, again.offset());
            for (int at = 0; at < length; at += 8) {
                assertEquals(0L, again.rings.getLong(at), "byte " + at + " of the cell taken again");
            }
            assertEquals(arena.cells, arena.inUse());
        } finally {
            arena.file.close();
        }
    }

    @Test
    void connectionsShareArenasReuseCellsCleanAndReleaseThemWithThePeer() throws Exception {
        List<Connection[]> held = new ArrayList<>();
        for (int i = 0; i < HELD; i++) {
            Connection[] pair = connect();
            echo(pair, i);
            held.add(pair);
        }
        int[] use = serverFabric.ringArenaUse();
        assertEquals(HELD, use[1], "one cell per connection");
        int cellsPerArena = ShmRingArena.TARGET_BYTES / ShmRingsDescriptor.fileLength(64, 64);
        assertTrue(use[0] <= (HELD + cellsPerArena - 1) / cellsPerArena + 1,
            use[0] + " arenas for " + HELD + " connections of " + cellsPerArena + " cells each");
        int arenas = use[0];
        // Each engine's closer opens its own doorbell selector once, the first time it takes arrivals for an
        // application that neither drives nor waits (a few descriptors per engine, not per connection): on a busy
        // machine that may come later than this look, so the bound below leaves room for the two engines' ones.
        Thread.sleep(300);
        int descriptors = ShmTestSupport.openDescriptors();

        // Connections closed and new ones opened once the closed ones' cells have rested: the new ones take those
        // cells, zeroed, and carry their own bytes exactly; no arena is added.
        for (int round = 0; round < CHURN / 100; round++) {
            for (int i = 0; i < 100; i++) {
                Connection[] old = held.remove(0);
                old[0].close();
                old[1].close();
            }
            awaitCondition("the closed connections' cells back", () -> serverFabric.ringArenaUse()[1] == HELD - 100);
            Thread.sleep(ShmRingArena.REST_NANOS / 1_000_000 + 50);
            for (int i = 0; i < 100; i++) {
                Connection[] pair = connect();
                echo(pair, HELD + round * 100 + i);
                held.add(pair);
            }
        }
        assertEquals(arenas, serverFabric.ringArenaUse()[0], "cells were reused, no arena added");
        int after = ShmTestSupport.openDescriptors();
        assertTrue(after <= descriptors + 8, "no descriptor per connection kept: " + descriptors + " -> " + after
            + " over " + CHURN + " connections opened and closed");
        for (Connection[] pair : held) {
            echo(pair, 7);
        }
        assertEquals(0, clientFabric.receiverNotReadyCount());
        assertEquals(0, serverFabric.receiverNotReadyCount());

        for (Connection[] pair : held) {
            pair[0].close();
            pair[1].close();
        }
        awaitCondition("every arena released with the peer", () -> serverFabric.ringArenaUse()[0] == 0);
        assertEquals(0, serverFabric.peerCount());
    }

    private Connection[] connect() throws IOException {
        Connection c = client.connect(listener.localAddress(), ConnectionOptions.DEFAULT);
        Connection[] accepted = new Connection[1];
        awaitCondition("a connection", () -> {
            try {
                if (accepted[0] == null) {
                    accepted[0] = listener.accept();
                }
                return accepted[0] != null && c.finishConnect();
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });
        return new Connection[] {c, accepted[0]};
    }

    /** 300 bytes of a pattern of {@code seed} each way, checked. */
    private void echo(Connection[] pair, int seed) throws IOException {
        byte[] sent = new byte[300];
        for (int i = 0; i < sent.length; i++) {
            sent[i] = (byte) (seed * 31 + i);
        }
        assertEquals(sent.length, pair[0].write(new ByteBuffer[] {ByteBuffer.wrap(sent)}, 0, 1));
        byte[] got = read(pair[1], sent.length);
        assertArrayEquals(sent, got, "connection " + seed + " to the server");
        assertEquals(got.length, pair[1].write(new ByteBuffer[] {ByteBuffer.wrap(got)}, 0, 1));
        assertArrayEquals(sent, read(pair[0], sent.length), "connection " + seed + " back");
    }

    private byte[] read(Connection c, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        awaitCondition("bytes on " + c, () -> {
            try {
                long r = c.read(new ByteBuffer[] {b}, 0, 1);
                assertTrue(r >= 0, "end of stream on " + c);
                return !b.hasRemaining();
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });
        return b.array();
    }

    private void awaitCondition(String what, BooleanSupplier done) {
        long deadline = System.nanoTime() + ShmTestSupport.TIMEOUT_NANOS;
        while (!done.getAsBoolean()) {
            client.progress();
            server.progress();
            if (System.nanoTime() - deadline > 0) {
                fail(what + ": not within the timeout");
            }
        }
    }
}
