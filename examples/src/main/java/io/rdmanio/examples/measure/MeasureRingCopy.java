package io.rdmanio.examples.measure;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ring-copy limit a shared-memory stream is compared with: {@code MeasureRingCopy [SECONDS [SLOT RING]]}. Two
 * threads of one JVM hand {@code SLOT}-byte slots (default 64 KiB, the shm fabric's) through a ring of
 * {@code RING} bytes (default 2 MiB: the fabric's default 32 slots) in a mapped {@code /dev/shm} file: one copies
 * 1 MiB writes from its own buffer into free slots, the other copies full slots out into its own 1 MiB buffer and
 * checks the bytes, as the shm stream's writer and reader do, with none of a connection's framing, credit or
 * wakeups. A waiting side spins briefly, then yields, as the fabric's does. Runs a one-second warm-up, then
 * {@code SECONDS} (default 2); prints a line and {@code result ring_mb_s=..}. Exits 1 if a byte arrived wrong.
 */
public final class MeasureRingCopy {

    private static final int WRITE = 1 << 20;
    private static final int SPINS_BEFORE_YIELD = 32;

    private final ByteBuffer ring;
    private final int slot;
    private final int slots;
    /** Slots filled and slots emptied since the start; each on its own cache lines. */
    private final AtomicLong filled = new AtomicLong();
    private final long[] padA = new long[16];
    private final AtomicLong emptied = new AtomicLong();
    private final long[] padB = new long[16];
    private volatile boolean stop;
    private volatile String failure;

    private MeasureRingCopy(ByteBuffer ring, int slot) {
        this.ring = ring;
        this.slot = slot;
        this.slots = ring.capacity() / slot;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 0 && args.length != 1 && args.length != 3) {
            System.err.println("usage: MeasureRingCopy [SECONDS [SLOT RING]]");
            System.exit(2);
        }
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        int slot = args.length > 1 ? Integer.parseInt(args[1]) : 64 << 10;
        int ringBytes = args.length > 1 ? Integer.parseInt(args[2]) : 2 << 20;
        if (!(seconds > 0 && seconds <= 600) || slot < 64 || WRITE % slot != 0 || ringBytes < slot
            || ringBytes % slot != 0) {
            System.err.println("SECONDS in (0, 600], SLOT at least 64 and dividing 1 MiB, RING a multiple of SLOT");
            System.exit(2);
        }
        Path dir = Files.isDirectory(Paths.get("/dev/shm")) ? Paths.get("/dev/shm") : null;
        Path file = dir == null ? Files.createTempFile("ring-copy", ".map")
            : Files.createTempFile(dir, "ring-copy", ".map");
        MappedByteBuffer mapped;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, ringBytes);
        } finally {
            Files.delete(file);
        }
        MeasureRingCopy m = new MeasureRingCopy(mapped, slot);
        m.run(1_000_000_000L);
        double mbs = m.run((long) (seconds * 1e9));
        System.out.printf(Locale.ROOT, "ring copy, %d KiB slots through a %d KiB ring, two threads: %.0f MB/s%n",
            slot >> 10, ringBytes >> 10, mbs);
        System.out.printf(Locale.ROOT, "result ring_mb_s=%.0f%n", mbs);
    }

    /** Streams for {@code nanos}; MB/s until the reader has copied out every byte written. */
    private double run(long nanos) throws InterruptedException {
        stop = false;
        long start = filled.get();
        Thread reader = new Thread(this::read, "ring-copy-reader");
        reader.start();
        ByteBuffer src = ByteBuffer.allocateDirect(WRITE);
        for (int i = 0; i < WRITE; i++) {
            src.put(i, (byte) (i * 31));
        }
        long t0 = System.nanoTime();
        long next = start;
        while (System.nanoTime() - t0 < nanos) {
            for (int off = 0; off < WRITE; off += slot) {
                int spins = 0;
                while (next - emptied.get() >= slots) {
                    if (failure != null) {
                        break;
                    }
                    spins = pause(spins);
                }
                ring.put((int) (next % slots) * slot, src, off, slot);
                filled.lazySet(++next);
            }
        }
        stop = true;
        reader.join();
        long ns = System.nanoTime() - t0;
        if (failure != null) {
            System.err.println(failure);
            System.exit(1);
        }
        return (next - start) * (double) slot / (ns / 1e9) / 1e6;
    }

    private void read() {
        ByteBuffer dst = ByteBuffer.allocateDirect(WRITE);
        long next = emptied.get();
        int off = 0;
        while (true) {
            int spins = 0;
            while (filled.get() == next) {
                if (stop && filled.get() == next) {
                    return;
                }
                spins = pause(spins);
            }
            dst.put(off, ring, (int) (next % slots) * slot, slot);
            emptied.lazySet(++next);
            off += slot;
            if (off == WRITE) {
                off = 0;
                // One byte per write checked, a different one each time: the copy must have happened.
                int i = (int) (next % WRITE);
                if (dst.get(i) != (byte) (i * 31)) {
                    failure = "ring copy: byte " + i + " arrived wrong";
                    stop = true;
                    return;
                }
            }
        }
    }

    private static int pause(int spins) {
        if (spins < SPINS_BEFORE_YIELD) {
            Thread.onSpinWait();
        } else {
            Thread.yield();
        }
        return spins + 1;
    }
}
