package io.rdmanio.core.fabric.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Readiness;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/** The connection engine, unchanged, over the shm fabric between this JVM and an echoing second JVM. */
class ShmEngineCrossProcessTest extends WithShmEngine {

    private static byte at(long i) {
        return (byte) (((i + 17) * 0x9E3779B97F4A7C15L) >>> 56);
    }

    @Test
    void engineStreamIsEchoedByteExactAcrossProcesses() throws Exception {
        try (PeerProcess peer = PeerProcess.start("engine-echo", dir.toString())) {
            int port = Integer.parseInt(peer.expect("LISTENING ").substring("LISTENING ".length()));
            Connection c = engine.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port),
                ConnectionOptions.DEFAULT);
            long deadline = System.nanoTime() + ShmTestSupport.TIMEOUT_NANOS * 3;
            while (!c.finishConnect()) {
                c.await(Readiness.CONNECT, 1_000_000_000L);
                if (System.nanoTime() - deadline > 0) {
                    fail("connect did not finish");
                }
            }
            long total = 16L << 20;
            Random random = new Random(7);
            ByteBuffer[] out = {ByteBuffer.allocateDirect(1 << 17)};
            ByteBuffer[] in = {ByteBuffer.allocateDirect(1 << 17)};
            CRC32 sentCrc = new CRC32();
            CRC32 receivedCrc = new CRC32();
            long written = 0;
            long read = 0;
            boolean shut = false;
            boolean eof = false;
            while (!eof) {
                if (System.nanoTime() - deadline > 0) {
                    fail("stream stalled: written " + written + ", read " + read + " of " + total);
                }
                if (written < total) {
                    int n = (int) Math.min(1 + random.nextInt(out[0].capacity()), total - written);
                    out[0].clear().limit(n);
                    for (int i = 0; i < n; i++) {
                        out[0].put(i, at(written + i));
                    }
                    long taken = c.write(out, 0, 1);
                    for (long i = 0; i < taken; i++) {
                        sentCrc.update(at(written + i));
                    }
                    written += taken;
                } else if (!shut) {
                    c.shutdownOutput();
                    shut = true;
                }
                in[0].clear();
                long n = c.read(in, 0, 1);
                if (n < 0) {
                    eof = true;
                } else {
                    for (int i = 0; i < n; i++) {
                        byte b = in[0].get(i);
                        if (b != at(read + i)) {
                            fail("byte " + (read + i) + " differs: " + b + " != " + at(read + i));
                        }
                        receivedCrc.update(b);
                    }
                    read += n;
                }
                if (n == 0) {
                    c.await(Readiness.READ | (written < total ? Readiness.WRITE : 0), 100_000_000L);
                }
            }
            assertEquals(total, read);
            assertEquals(sentCrc.getValue(), receivedCrc.getValue());
            assertEquals("ECHOED " + total, peer.expect("ECHOED "));
            c.close();
        }
    }

    @Test
    void engineConnectWhereNoOneListensIsAConnectException() throws Exception {
        Connection c = engine.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), 9),
            ConnectionOptions.DEFAULT);
        ConnectException e = assertThrows(ConnectException.class, () -> {
            long deadline = System.nanoTime() + ShmTestSupport.TIMEOUT_NANOS;
            while (!c.finishConnect() && System.nanoTime() - deadline < 0) {
                c.await(Readiness.CONNECT, 1_000_000_000L);
            }
        });
        assertTrue(e.getMessage().contains("127.0.0.1:9"), e.getMessage());
        c.close();
    }
}
