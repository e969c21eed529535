package io.rdmanio.core.engine;

import static io.rdmanio.core.protocol.FrameDescriptor.HEADER_LENGTH;
import static io.rdmanio.core.protocol.FrameDescriptor.TYPE_CREDIT;
import static io.rdmanio.core.protocol.FrameDescriptor.TYPE_DATA;
import static io.rdmanio.core.protocol.FrameDescriptor.TYPE_FIN;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.protocol.FrameDescriptor;
import io.rdmanio.core.protocol.HandshakeDescriptor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Frame headers fuzzed against a live engine, on the loopback fabric and on shm: a raw peer ({@link RawPeer})
 * sends frames whose type, flags, reserved field, length, sent size and credit counters are drawn at random, mostly
 * near valid values. A frame the header rules refuse fails its connection with a ProtocolException within the
 * bound; any other frame either fails it with an IOException or delivers its payload (zeros) exactly. A healthy
 * connection on the same engine carries bytes exact throughout, nothing but IOExceptions is ever thrown, and the
 * failed connections' slots all come back.
 *
 * <p>Seeded and reproducible: the seed is printed and named in every failure; {@code -Drdmanio.fuzz.seed=N}
 * replays it, {@code -Drdmanio.fuzz.rounds=N} runs longer.
 */
class FrameFuzzTest {

    private static final int SLOT = 1024;
    private static final EngineConfig CONFIG = EngineConfig.DEFAULT.withSlotSize(SLOT).withRingDepth(4);
    private static final int ROUNDS = Integer.getInteger("rdmanio.fuzz.rounds", 60);

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"loopback", "shm"})
    void fuzzedFrameHeadersFailOnlyTheirConnection(String fabricName) throws Exception {
        long seed = Long.getLong("rdmanio.fuzz.seed", System.nanoTime());
        System.out.println(fabricName + " frame fuzz seed " + seed + " (replay with -Drdmanio.fuzz.seed=" + seed + ")");
        Random random = new Random(seed);
        Path dir = null;
        Fabric serverFabric;
        Fabric peerFabric;
        if (fabricName.equals("shm")) {
            dir = Path.of("/dev/shm/rdmanio-t-" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
            serverFabric = Fabrics.open("shm", Map.of("shm.dir", dir.toString()));
            peerFabric = Fabrics.open("shm", Map.of("shm.dir", dir.toString()));
        } else {
            serverFabric = Fabrics.open("loopback", Map.of("loopback.seed", Long.toString(seed)));
            peerFabric = serverFabric;
        }
        FabricEngine server = (FabricEngine) Engines.open(serverFabric, CONFIG);
        FabricEngine client = (FabricEngine) Engines.open(peerFabric, CONFIG);
        Runnable pump = () -> {
            server.progress();
            client.progress();
        };
        try (Listener listener = server.listen(new InetSocketAddress("127.0.0.1", 0), 64,
            ConnectionOptions.DEFAULT)) {
            Connection healthyClient = client.connect(listener.localAddress(), ConnectionOptions.DEFAULT);
            Connection healthyServer = awaitAccept(listener, pump, "seed " + seed);
            await(pump, "seed " + seed + ": the healthy connection", () -> healthyClient.finishConnect());
            int free = server.pool().freeSlots();
            int failed = 0;
            for (int round = 0; round < ROUNDS; round++) {
                String where = fabricName + " seed " + seed + " round " + round;
                failed += fuzzOne(listener, peerFabric, pump, random, where) ? 1 : 0;
                byte[] bytes = new byte[1 + random.nextInt(3000)];
                random.nextBytes(bytes);
                ByteBuffer out = ByteBuffer.wrap(bytes);
                ByteBuffer in = ByteBuffer.allocate(bytes.length);
                await(pump, where + ": the healthy connection", () -> {
                    if (out.hasRemaining()) {
                        Pair.write(healthyClient, out);
                    }
                    Pair.read(healthyServer, in);
                    return !in.hasRemaining();
                });
                assertArrayEquals(bytes, in.array(), where + ": the healthy connection");
            }
            await(pump, fabricName + " seed " + seed + ": every failed connection's slots back",
                () -> server.pool().freeSlots() == free);
            System.out.println(fabricName + " frame fuzz: " + failed + " of " + ROUNDS
                + " fuzzed connections failed, the others delivered their frames exactly");
            healthyClient.close();
            healthyServer.close();
        } finally {
            client.close();
            server.close();
            if (peerFabric != serverFabric) {
                peerFabric.close();
            }
            serverFabric.close();
            if (dir != null) {
                try (Stream<Path> walk = Files.walk(dir)) {
                    walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    /** One raw connection sent a few fuzzed frames; returns whether it failed. */
    private static boolean fuzzOne(Listener listener, Fabric fabric, Runnable pump, Random random, String where)
        throws Exception {
        try (RawPeer raw = new RawPeer(fabric, SLOT)) {
            CmEvent e = raw.connect(pump, listener.localAddress(), raw.handshake(HandshakeDescriptor.VERSION));
            assertEquals(CmEvent.Type.ESTABLISHED, e.type(), where);
            Connection victim = awaitAccept(listener, pump, where);
            long dataCredit = 4;
            long controlCredit = 2;
            int frames = 1 + random.nextInt(4);
            long expectedZeros = 0;
            long readZeros = 0;
            for (int f = 0; f < frames; f++) {
                int type = random.nextInt(10) < 8
                    ? new int[] {TYPE_DATA, TYPE_DATA, TYPE_CREDIT, TYPE_FIN, 4}[random.nextInt(5)]
                    : random.nextInt(256);
                int flags = random.nextInt(10) < 8 ? 0 : random.nextInt(256);
                int reserved = random.nextInt(10) < 8 ? 0 : random.nextInt(1 << 16);
                int payload = type == TYPE_DATA ? random.nextInt(SLOT - HEADER_LENGTH + 1) : 0;
                long lengthField = random.nextInt(10) < 8 ? payload : random.nextInt(4) == 0 ? random.nextInt()
                    & 0xffffffffL : payload + random.nextInt(9) - 4;
                int sendLength = random.nextInt(10) < 8 ? HEADER_LENGTH + payload : 1 + random.nextInt(2 * SLOT);
                long dc = random.nextInt(10) < 8 ? dataCredit + random.nextInt(2) : random.nextLong();
                long cc = random.nextInt(10) < 8 ? controlCredit + random.nextInt(2) : random.nextLong();
                ByteBuffer header = ByteBuffer.allocate(2 * SLOT).order(FrameDescriptor.BYTE_ORDER);
                FrameDescriptor.writeHeader(header, 0, type, (int) lengthField, dc, cc);
                header.put(FrameDescriptor.FLAGS_OFFSET, (byte) flags);
                header.putShort(FrameDescriptor.RESERVED_OFFSET, (short) reserved);
                // The header rules (type 4 was version 1's HELLO) and the sized receive slot: what must fail.
                boolean mustFail = sendLength > SLOT
                    || FrameDescriptor.checkHeader(header, 0, sendLength, SLOT) != null
                    || dc < dataCredit || cc < controlCredit;
                try {
                    raw.send(type, flags, reserved, lengthField, sendLength, dc, cc);
                } catch (IOException x) {
                    // the raw side's queue pair already failed: so must the victim
                    mustFail = true;
                }
                dataCredit = Math.max(dataCredit, dc);
                controlCredit = Math.max(controlCredit, cc);
                if (!mustFail && type == TYPE_DATA) {
                    expectedZeros += lengthField;
                }
                long[] zeros = {readZeros};
                IOException failure = drain(victim, pump, raw, zeros, mustFail, where + " frame " + f + " (type "
                    + type + " flags " + flags + " reserved " + reserved + " length " + lengthField + " sent "
                    + sendLength + " credits " + dc + "/" + cc + ")");
                readZeros = zeros[0];
                if (failure != null) {
                    victim.close();
                    return true;
                }
                if (type == TYPE_FIN) {
                    break;
                }
            }
            victim.close();
            assertTrue(readZeros <= expectedZeros, where + ": read " + readZeros + " bytes of " + expectedZeros);
            return false;
        }
    }

    /**
     * Pumps and reads the victim: returns its failure (an IOException), or null when it stayed up with every byte
     * read a zero; fails the test if {@code mustFail} and no failure came within the bound.
     */
    private static IOException drain(Connection victim, Runnable pump, RawPeer raw, long[] zeros, boolean mustFail,
                                     String where) throws IOException {
        ByteBuffer in = ByteBuffer.allocate(4096);
        long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS;
        int quiet = 0;
        while (true) {
            pump.run();
            try {
                raw.pollCq();
            } catch (IOException e) {
                // the raw side failed (it reposts receives on a queue pair in error): the victim learns it too
            }
            in.clear();
            long n;
            try {
                n = Pair.read(victim, in);
            } catch (IOException e) {
                return e;
            }
            for (int i = 0; i < n; i++) {
                if (in.get(i) != 0) {
                    fail(where + ": byte " + (zeros[0] + i) + " read is " + in.get(i) + ", the peer sent zeros");
                }
            }
            if (n < 0) {
                return null; // the peer's FIN: the stream ended cleanly after every byte it sent
            }
            zeros[0] += n;
            quiet = n != 0 ? 0 : quiet + 1;
            if (!mustFail && quiet > 200) {
                return null;
            }
            if (System.nanoTime() - deadline > 0) {
                fail(where + ": the connection neither failed nor went quiet within the bound");
            }
        }
    }

    private static Connection awaitAccept(Listener listener, Runnable pump, String where) throws IOException {
        Connection[] c = new Connection[1];
        await(pump, where + ": accept", () -> (c[0] = listener.accept()) != null);
        return c[0];
    }

    interface Check {
        boolean ok() throws IOException;
    }

    private static void await(Runnable pump, String what, Check check) throws IOException {
        long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS;
        while (!check.ok()) {
            pump.run();
            if (System.nanoTime() - deadline > 0) {
                fail("timed out waiting for " + what);
            }
        }
    }
}
