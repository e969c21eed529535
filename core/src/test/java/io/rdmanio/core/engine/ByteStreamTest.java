package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Streams arrive byte-exact: every byte checked in order and CRC32 compared, both directions. */
class ByteStreamTest {

    @Test
    void randomWriteAndReadSizesFromOneByteToSixteenMegabytesHeapAndDirect() throws Exception {
        try (Pair p = new Pair(EngineConfig.DEFAULT, 5)) {
            Random r = new Random(5);
            FabricConnection[] cs = p.connect();
            long total = 48L << 20;
            Streams ab = new Streams(total, 1);
            Streams ba = new Streams(total, 2);
            int max = 16 << 20;
            ByteBuffer[] out = {ByteBuffer.allocate(max), ByteBuffer.allocateDirect(max)};
            ByteBuffer[] in = {ByteBuffer.allocate(max), ByteBuffer.allocateDirect(max)};
            long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS * 2;
            while (!(ab.readerDone() && ba.readerDone())) {
                // A write size is kept until the connection has taken the whole of it, as an application would.
                int size = Streams.size(r, max);
                ByteBuffer o = out[r.nextInt(2)];
                writeFully(p, ab, cs[0], o, size, cs[1], in[r.nextInt(2)], r);
                writeFully(p, ba, cs[1], out[r.nextInt(2)], Streams.size(r, max), cs[0], in[r.nextInt(2)], r);
                assertTrue(System.nanoTime() - deadline < 0, "timed out");
            }
            ab.assertChecksumsMatch();
            ba.assertChecksumsMatch();
            assertEquals(0, p.fabric.receiverNotReadyCount());
        }
    }

    /** Offers {@code size} bytes until taken, reading the other side with random buffer sizes meanwhile. */
    private static void writeFully(Pair p, Streams s, Connection from, ByteBuffer buf, int size, Connection to,
                                   ByteBuffer readBuf, Random r) throws Exception {
        long target = Math.min(s.total, s.written + size);
        while (s.written < target) {
            s.write(from, buf, (int) (target - s.written));
            p.pump();
            while (s.read(to, readBuf, Streams.size(r, readBuf.capacity())) > 0) {
                p.pump();
            }
        }
        while (s.read < s.written) {
            p.pump();
            s.read(to, readBuf, Streams.size(r, readBuf.capacity()));
        }
    }

    @Test
    void aThousandConnectionsDrivenByOneThread() throws Exception {
        EngineConfig config = EngineConfig.DEFAULT.withSlotSize(4096);
        try (Pair p = new Pair(config, 9)) {
            int n = 1000;
            // One data slot and one staging slot each way: the smallest ring, so memory stays small.
            ConnectionOptions tiny = new ConnectionOptions(4096, 4096);
            FabricConnection[][] cs = new FabricConnection[n][];
            for (int i = 0; i < n; i++) {
                cs[i] = p.connect(tiny);
            }
            Streams[] ab = new Streams[n];
            Streams[] ba = new Streams[n];
            for (int i = 0; i < n; i++) {
                ab[i] = new Streams(20_000 + i, i);
                ba[i] = new Streams(30_000 - i, -i);
            }
            ByteBuffer buf = ByteBuffer.allocateDirect(8192);
            Random r = new Random(9);
            long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS * 2;
            int done = 0;
            while (done < n) {
                done = 0;
                for (int i = 0; i < n; i++) {
                    ab[i].write(cs[i][0], buf, Streams.size(r, 8192));
                    ba[i].write(cs[i][1], buf, Streams.size(r, 8192));
                    ab[i].read(cs[i][1], buf, 8192);
                    ba[i].read(cs[i][0], buf, 8192);
                    if (ab[i].readerDone() && ba[i].readerDone()) {
                        done++;
                    }
                }
                p.pump();
                assertTrue(System.nanoTime() - deadline < 0, "timed out with " + done + " of " + n + " done");
            }
            for (int i = 0; i < n; i++) {
                ab[i].assertChecksumsMatch();
                ba[i].assertChecksumsMatch();
            }
            assertEquals(0, p.fabric.receiverNotReadyCount());
            assertEquals(n, p.client.stats().connectionsOpened());
            for (FabricConnection[] c : cs) {
                c[0].close();
                c[1].close();
            }
            p.await("every connection torn down", () -> p.client.pool().slotsInUse() == 0
                && p.server.pool().slotsInUse() == 0);
            assertEquals(0, p.client.connectionCount());
            assertEquals(0, p.server.connectionCount());
        }
    }
}
