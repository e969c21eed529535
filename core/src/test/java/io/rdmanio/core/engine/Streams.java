package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.zip.CRC32;

/**
 * One direction of a checked byte stream: the writer produces a deterministic sequence (byte {@code i} depends
 * on the seed and {@code i}), the reader checks every byte against it and both keep a CRC32.
 */
final class Streams {

    long total;
    final int seed;
    long written;
    long read;
    boolean eof;
    final CRC32 sent = new CRC32();
    final CRC32 received = new CRC32();
    /** One per end: the writer and the reader may be different threads. */
    private final byte[] writeScratch = new byte[1 << 16];
    private final byte[] readScratch = new byte[1 << 16];

    Streams(long total, int seed) {
        this.total = total;
        this.seed = seed;
    }

    byte at(long i) {
        long x = (i + seed) * 0x9E3779B97F4A7C15L;
        return (byte) (x >>> 56);
    }

    /** Ends the stream at what was written so far. */
    void endHere() {
        total = written;
    }

    boolean writerDone() {
        return written == total;
    }

    boolean readerDone() {
        return read == total;
    }

    /**
     * Writes up to {@code max} bytes of the sequence through {@code buf} (cleared and refilled; heap or direct).
     *
     * @return bytes taken by the connection
     */
    long write(Connection c, ByteBuffer buf, int max) throws IOException {
        return write(c, buf, max, false);
    }

    /** As {@link #write(Connection, ByteBuffer, int)}, through {@link Connection#writeDirect} when {@code direct}. */
    long write(Connection c, ByteBuffer buf, int max, boolean direct) throws IOException {
        int n = (int) Math.min(Math.min(max, buf.capacity()), total - written);
        if (n <= 0) {
            return 0;
        }
        buf.clear();
        for (int off = 0; off < n; off += writeScratch.length) {
            int k = Math.min(writeScratch.length, n - off);
            for (int i = 0; i < k; i++) {
                writeScratch[i] = at(written + off + i);
            }
            buf.put(writeScratch, 0, k);
        }
        buf.flip();
        ByteBuffer[] srcs = {buf};
        long taken = direct ? c.writeDirect(srcs, 0, 1) : c.write(srcs, 0, 1);
        for (int off = 0; off < taken; off += writeScratch.length) {
            int k = (int) Math.min(writeScratch.length, taken - off);
            buf.get(off, writeScratch, 0, k);
            sent.update(writeScratch, 0, k);
        }
        written += taken;
        return taken;
    }

    /** Reads up to {@code max} bytes into {@code buf}, checking each; returns the count or -1. */
    long read(Connection c, ByteBuffer buf, int max) throws IOException {
        buf.clear();
        buf.limit(Math.min(max, buf.capacity()));
        long n = c.read(new ByteBuffer[] {buf}, 0, 1);
        if (n < 0) {
            eof = true;
            return n;
        }
        for (int off = 0; off < n; off += readScratch.length) {
            int k = (int) Math.min(readScratch.length, n - off);
            buf.get(off, readScratch, 0, k);
            for (int i = 0; i < k; i++) {
                long at = read + off + i;
                if (readScratch[i] != at(at)) {
                    throw new AssertionError("byte " + at + " is " + readScratch[i] + ", expected " + at(at));
                }
            }
            received.update(readScratch, 0, k);
        }
        read += n;
        return n;
    }

    void assertChecksumsMatch() {
        assertEquals(total, read, "bytes read");
        assertEquals(sent.getValue(), received.getValue(), "CRC32 of the stream");
    }

    /** One write step of a side of {@link #duplexThreads}: writes some of {@code out} through {@code me}. */
    interface WriteStep {
        long write(Connection me, Streams out, ByteBuffer buf, Random r) throws IOException;
    }

    /**
     * One thread per side, each writing its stream ({@code ab} from {@code cs[0]}, {@code ba} from {@code cs[1]})
     * and reading the other's, waiting in {@link Connection#await} when neither moves; then each ends as a NIO
     * application does (FIN, then a read of the peer's FIN: staged bytes need progress until the peer has them).
     * Fails on a side's error, or on a deadlock after a minute; the streams' checksums are left to the caller.
     */
    static void duplexThreads(FabricConnection[] cs, Streams ab, Streams ba, int writeBuffer, int readBuffer,
            boolean direct, WriteStep step) throws InterruptedException {
        Thread[] sides = new Thread[2];
        Throwable[] errors = new Throwable[2];
        for (int s = 0; s < 2; s++) {
            int side = s;
            sides[s] = new Thread(() -> {
                try {
                    Connection me = cs[side];
                    Streams out = side == 0 ? ab : ba;
                    Streams in = side == 0 ? ba : ab;
                    ByteBuffer wbuf = direct ? ByteBuffer.allocateDirect(writeBuffer) : ByteBuffer.allocate(writeBuffer);
                    ByteBuffer rbuf = ByteBuffer.allocate(readBuffer);
                    Random r = new Random(side);
                    while (!out.writerDone() || !in.readerDone()) {
                        boolean moved = false;
                        if (!out.writerDone()) {
                            moved |= step.write(me, out, wbuf, r) > 0;
                        }
                        moved |= in.read(me, rbuf, readBuffer) > 0;
                        if (!moved) {
                            int ops = (out.writerDone() ? 0 : Readiness.WRITE) | Readiness.READ;
                            me.await(ops, 10_000_000_000L);
                        }
                    }
                    me.shutdownOutput();
                    rbuf.clear();
                    while (me.read(new ByteBuffer[] {rbuf}, 0, 1) != -1) {
                        me.await(Readiness.READ, 10_000_000_000L);
                    }
                } catch (Throwable t) {
                    errors[side] = t;
                }
            }, "side-" + s);
            sides[s].start();
        }
        for (Thread t : sides) {
            t.join(60_000);
            for (Throwable e : errors) {
                if (e != null) {
                    throw new AssertionError("a side failed", e);
                }
            }
            if (t.isAlive()) {
                throw new AssertionError("deadlock: " + t.getName() + " still running; " + cs[0].creditState()
                    + " | " + cs[1].creditState());
            }
        }
    }

    static int size(Random r, int max) {
        // Log-uniform: as many small writes as large ones.
        int bits = 1 + r.nextInt(31 - Integer.numberOfLeadingZeros(max));
        return Math.max(1, Math.min(max, (1 << (bits - 1)) + r.nextInt(1 << (bits - 1))));
    }
}
