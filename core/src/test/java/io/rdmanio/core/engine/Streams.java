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

    static int size(Random r, int max) {
        // Log-uniform: as many small writes as large ones.
        int bits = 1 + r.nextInt(31 - Integer.numberOfLeadingZeros(max));
        return Math.max(1, Math.min(max, (1 << (bits - 1)) + r.nextInt(1 << (bits - 1))));
    }
}
