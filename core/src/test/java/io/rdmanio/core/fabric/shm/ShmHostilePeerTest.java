package io.rdmanio.core.fabric.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Readiness;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A peer process that breaks what it shares with this one (overwrites the connection's ring with zeros or garbage,
 * shrinks its region files or its region directory under this process's mappings) while both ends are parked:
 * this process fails that connection, within a bound, with a {@link ProtocolException} naming what it found; the
 * process and a connection to another peer carry on, byte-exact. The connection engine runs unchanged on both
 * sides.
 */
class ShmHostilePeerTest extends WithShmEngine {

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "zero, is corrupt",
        "garbage, is corrupt",
        "region, shrank its shared region file",
        "directory, shrank its shared region directory",
    })
    void aPeerBreakingWhatItSharesFailsOnlyItsConnection(String misdeed, String named) throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        // Shrinking is possible only with plain shared files (sealed memory refuses it, below): the fallback where
        // the library is missing, or rdmanio.shm.sealed=false on both sides.
        boolean plain = misdeed.equals("region") || misdeed.equals("directory");
        ShmNatives.offForTests(plain);
        try (PeerProcess hostile = plain
                ? PeerProcess.startUnsealed("hostile-echo", dir.toString(), misdeed, Long.toString(seed))
                : PeerProcess.start("hostile-echo", dir.toString(), misdeed, Long.toString(seed));
             PeerProcess healthy = plain ? PeerProcess.startUnsealed("engine-echo", dir.toString())
                : PeerProcess.start("engine-echo", dir.toString())) {
            Connection victim = connect(hostile);
            Connection other = connect(healthy);
            echo(victim, random, seed);
            echo(other, random, seed);
            // Both ends idle now: the peer breaks things only when told, so that nothing is in flight.
            hostile.send("go");
            hostile.expect("DID " + misdeed);
            long start = System.nanoTime();
            IOException failure = null;
            while (failure == null) {
                if (System.nanoTime() - start > ShmTestSupport.TIMEOUT_NANOS) {
                    fail("seed " + seed + ": the connection to a peer that did '" + misdeed + "' has not failed");
                }
                try {
                    if (victim.read(new ByteBuffer[] {ByteBuffer.allocate(64)}, 0, 1) < 0) {
                        fail("seed " + seed + ": end of stream instead of an error after '" + misdeed + "'");
                    }
                    victim.await(Readiness.READ, 50_000_000L);
                } catch (IOException e) {
                    failure = e;
                }
                echo(other, random, seed);
            }
            System.out.println(misdeed + ": failed after " + (System.nanoTime() - start) / 1_000_000 + " ms: "
                + failure);
            IOException f = failure;
            assertTrue(failure instanceof ProtocolException && failure.getMessage().contains(named),
                () -> "seed " + seed + ": " + f + "; the hostile peer printed " + hostile.output());
            for (int i = 0; i < 50; i++) {
                echo(other, random, seed);
            }
            victim.close();
            other.close();
        } finally {
            ShmNatives.offForTests(false);
        }
    }

    /**
     * With sealed memory (the default where librdmanio-shm loads), a peer cannot shrink any memory it shares with
     * this process: every truncation it tries fails, and both connections go on, byte-exact.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"region", "directory", "readymap"})
    void aPeerCannotShrinkSealedMemory(String misdeed) throws Exception {
        requireSealedMemory();
        long seed = System.nanoTime();
        Random random = new Random(seed);
        try (PeerProcess hostile = PeerProcess.start("hostile-echo", dir.toString(), misdeed, Long.toString(seed));
             PeerProcess healthy = PeerProcess.start("engine-echo", dir.toString())) {
            Connection victim = connect(hostile);
            Connection other = connect(healthy);
            echo(victim, random, seed);
            hostile.send("go");
            String refused = hostile.expect("REFUSED " + misdeed);
            assertTrue(refused.contains("Operation not permitted"), refused);
            for (int i = 0; i < 20; i++) {
                echo(victim, random, seed);
                echo(other, random, seed);
            }
            victim.close();
            other.close();
        }
    }

    /** A peer whose shared memory is not sealed is refused: its connection fails at setup, naming why. */
    @org.junit.jupiter.api.Test
    void aPeerOfferingUnsealedMemoryIsRefused() throws Exception {
        requireSealedMemory();
        long seed = System.nanoTime();
        Random random = new Random(seed);
        try (PeerProcess unsealed = PeerProcess.startUnsealed("engine-echo", dir.toString());
             PeerProcess healthy = PeerProcess.start("engine-echo", dir.toString())) {
            Connection other = connect(healthy);
            IOException e = assertThrows(IOException.class, () -> {
                Connection c = connect(unsealed);
                // The peer's memory is mapped at the first exchange, if not at the handshake.
                echo(c, random, seed);
            });
            assertTrue(String.valueOf(e.getMessage()).contains("not sealed against shrinking"), e.toString());
            for (int i = 0; i < 20; i++) {
                echo(other, random, seed);
            }
            other.close();
        }
    }

    /**
     * librdmanio-shm is built with core (gcc is part of the setup), so it must load; on JDK 24 and later only with
     * native access enabled, which the test JVM may not have (then these cases are skipped).
     */
    static void requireSealedMemory() {
        if (Runtime.version().feature() >= 24) {
            assumeTrue(ShmNatives.unavailableReason() == null, ShmNatives::unavailableReason);
        } else {
            assertNull(ShmNatives.unavailableReason());
        }
    }

    private Connection connect(PeerProcess peer) throws Exception {
        int port = Integer.parseInt(peer.expect("LISTENING ").substring("LISTENING ".length()));
        Connection c = engine.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port),
            ConnectionOptions.DEFAULT);
        long deadline = System.nanoTime() + ShmTestSupport.TIMEOUT_NANOS;
        while (!c.finishConnect()) {
            if (System.nanoTime() - deadline > 0) {
                fail("connect did not finish");
            }
            c.await(Readiness.CONNECT, 100_000_000L);
        }
        return c;
    }

    /** Writes a random message and reads its echo, byte-exact, within the timeout. */
    private static void echo(Connection c, Random random, long seed) throws IOException {
        byte[] sent = new byte[1 + random.nextInt(100_000)];
        random.nextBytes(sent);
        ByteBuffer[] out = {ByteBuffer.wrap(sent)};
        ByteBuffer[] in = {ByteBuffer.allocate(sent.length)};
        long deadline = System.nanoTime() + ShmTestSupport.TIMEOUT_NANOS;
        while (in[0].hasRemaining()) {
            if (System.nanoTime() - deadline > 0) {
                fail("seed " + seed + ": echo stalled at " + in[0].position() + " of " + sent.length);
            }
            if (out[0].hasRemaining()) {
                c.write(out, 0, 1);
            }
            if (c.read(in, 0, 1) < 0) {
                fail("seed " + seed + ": end of stream during an echo");
            }
            if (in[0].hasRemaining()) {
                c.await(Readiness.READ | (out[0].hasRemaining() ? Readiness.WRITE : 0), 10_000_000L);
            }
        }
        assertArrayEquals(sent, in[0].array(), "seed " + seed);
    }
}
