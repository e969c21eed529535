package io.rdmanio.core.fabric.shm;

import java.nio.ByteBuffer;

/**
 * Layout of a completion queue's ready map: one bit per queue pair attached to the queue, set by whoever released
 * a completion for it (a peer process's sender, or this process for local send completions and flushes), so that
 * a poll visits the queue pairs that have completions and no other. It is the shm counterpart of a verbs
 * completion queue shared by many queue pairs: polling costs the completions, not the connections.
 *
 * <pre>{@code
 *   0          4          8          12                                                           64
 *   +----------+----------+----------+------------------------------------------------------------+
 *   | magic    | version  | capacity | wakeup fd| (reserved)                                      | header
 *   +----------+----------+----------+----------+-------------------------------------------------+
 *   64   armed (int): while the owner waits, ARMED_RELAY (ring the connection's socket: the owner's watcher runs
 *        its notifier) and/or ARMED_WATCHED (write a byte into the owner's wakeup pipe, named by "wakeup fd" in
 *        the owner's process, -1 when it has none: a selector watching the pipe wakes at once); cleared by the
 *        producer that rings it
 *   128  summary[summaryWords] (long): bit j set when word j may be non-zero
 *   128 + summaryWords * 8, rounded up to 64:
 *        word[capacity / 64] (long): bit i % 64 of word i / 64 set when queue pair i may have a completion
 * }</pre>
 *
 * <p>A producer sets the queue pair's bit, then the word's summary bit (two atomic ORs: a producer that dies
 * between them leaves a set word whose next producer sets the summary again), then reads {@code armed}. The owner
 * swaps a summary word to zero, then each word it names, and drains the queue pairs of the bits it took; a bit
 * set again meanwhile is visited by the next poll. A bit may be set with nothing to poll (a completion another
 * poll took first, a queue pair gone): visiting it finds nothing. Any bit pattern a peer writes can only cost
 * such visits, never a lost completion of another queue pair.
 */
final class ShmReadyMapDescriptor {

    static final int MAGIC = 0x53484d51; // "SHMQ"
    static final int VERSION = 2;
    static final int CAPACITY_OFFSET = 8;
    static final int WAKEUP_FD_OFFSET = 12;
    static final int ARMED_OFFSET = 64;
    static final int SUMMARY_OFFSET = 128;
    /** Armed for a waiter that relies on the fabric's watcher: ring the connection's socket. */
    static final int ARMED_RELAY = 1;
    /** Armed for a waiter whose selector watches the wakeup pipe: write a byte into it. */
    static final int ARMED_WATCHED = 2;

    /** Queue pairs a map holds at most (bits): the largest shm completion queue's entries. */
    static final int MAX_CAPACITY = 1 << 18;

    private ShmReadyMapDescriptor() {
    }

    /** The capacity (a multiple of 64 bits, at least 64) of a map for a queue of {@code entries} entries. */
    static int capacityFor(int entries) {
        int bits = Math.max(64, Math.min(MAX_CAPACITY, entries));
        return (bits + 63) & ~63;
    }

    static int summaryWords(int capacity) {
        return (capacity / 64 + 63) / 64;
    }

    static int wordsOffset(int capacity) {
        return SUMMARY_OFFSET + ((summaryWords(capacity) * 8 + 63) & ~63);
    }

    /** The file length, rounded to a page. */
    static int fileLength(int capacity) {
        long n = wordsOffset(capacity) + (long) capacity / 8;
        return (int) ((n + 4095) & ~4095L);
    }

    static void writeHeader(ByteBuffer b, int capacity, int wakeupFd) {
        b.putInt(4, VERSION);
        b.putInt(CAPACITY_OFFSET, capacity);
        b.putInt(WAKEUP_FD_OFFSET, wakeupFd);
        ShmRingsDescriptor.INT.setRelease(b, 0, MAGIC);
    }

    /** Null when {@code b} is a ready map with room for bit {@code index}, else why not. */
    static String check(ByteBuffer b, int index) {
        if (b.capacity() < SUMMARY_OFFSET || (int) ShmRingsDescriptor.INT.getAcquire(b, 0) != MAGIC
            || b.getInt(4) != VERSION) {
            return "the peer's completion queue is not a ready map of version " + VERSION;
        }
        int capacity = b.getInt(CAPACITY_OFFSET);
        if (capacity < 64 || capacity > MAX_CAPACITY || (capacity & 63) != 0 || b.capacity() < fileLength(capacity)) {
            return "the peer's completion queue has a bad capacity " + capacity;
        }
        if (index < 0 || index >= capacity) {
            return "the peer named queue pair " + index + " of a completion queue of " + capacity;
        }
        return null;
    }

    // ---- producers

    /** Marks queue pair {@code index} ready: its bit, then its word's summary bit. */
    static void markReady(ByteBuffer b, int capacity, int index) {
        int word = index >>> 6;
        ShmRingsDescriptor.LONG.getAndBitwiseOr(b, wordsOffset(capacity) + word * 8, 1L << (index & 63));
        ShmRingsDescriptor.LONG.getAndBitwiseOr(b, SUMMARY_OFFSET + (word >>> 6) * 8, 1L << (word & 63));
    }

    /**
     * After {@link #markReady}: how the owner is armed ({@link #ARMED_RELAY}, {@link #ARMED_WATCHED} or both),
     * clearing the flag if so (ring as it says then); 0 when it is not, or when another producer took it first.
     * A value no owner writes is left to the owner's periodic check.
     */
    static int tryDisarm(ByteBuffer b) {
        int v = (int) ShmRingsDescriptor.INT.getVolatile(b, ARMED_OFFSET);
        if (v <= 0 || v > (ARMED_RELAY | ARMED_WATCHED)) {
            return 0;
        }
        return ShmRingsDescriptor.INT.compareAndSet(b, ARMED_OFFSET, v, 0) ? v : 0;
    }

    // ---- the owner (the queue's single poller)

    /** Takes summary word {@code s}: its bits, leaving it zero. */
    static long takeSummary(ByteBuffer b, int s) {
        int at = SUMMARY_OFFSET + s * 8;
        if ((long) ShmRingsDescriptor.LONG.getVolatile(b, at) == 0) {
            return 0;
        }
        return (long) ShmRingsDescriptor.LONG.getAndSet(b, at, 0L);
    }

    /** Takes word {@code w}: its bits, leaving it zero. */
    static long takeWord(ByteBuffer b, int capacity, int w) {
        return (long) ShmRingsDescriptor.LONG.getAndSet(b, wordsOffset(capacity) + w * 8, 0L);
    }

    /** Puts back bits of word {@code w} that a poll took but did not visit. */
    static void restoreWord(ByteBuffer b, int capacity, int w, long bits) {
        ShmRingsDescriptor.LONG.getAndBitwiseOr(b, wordsOffset(capacity) + w * 8, bits);
        ShmRingsDescriptor.LONG.getAndBitwiseOr(b, SUMMARY_OFFSET + (w >>> 6) * 8, 1L << (w & 63));
    }

    /** Puts back bits of summary word {@code s} that a poll took but did not visit. */
    static void restoreSummary(ByteBuffer b, int s, long bits) {
        ShmRingsDescriptor.LONG.getAndBitwiseOr(b, SUMMARY_OFFSET + s * 8, bits);
    }

    /** Whether any queue pair may be ready. */
    static boolean anyReady(ByteBuffer b, int capacity) {
        int n = summaryWords(capacity);
        for (int s = 0; s < n; s++) {
            if ((long) ShmRingsDescriptor.LONG.getVolatile(b, SUMMARY_OFFSET + s * 8) != 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Asks producers for a doorbell of the kinds in {@code bits}, adding them to those already asked for; the caller
     * re-checks with {@link #anyReady} afterwards. Returns the flag as it was.
     */
    static int setArmed(ByteBuffer b, int bits) {
        return (int) ShmRingsDescriptor.INT.getAndBitwiseOr(b, ARMED_OFFSET, bits);
    }

    /** Stops asking for the kinds in {@code bits} (a producer may have taken the flag meanwhile: nothing then). */
    static void clearArmed(ByteBuffer b, int bits) {
        ShmRingsDescriptor.INT.getAndBitwiseAnd(b, ARMED_OFFSET, ~bits);
    }

    /** The wakeup pipe's descriptor in the owner's process, -1 when it has none. */
    static int wakeupFd(ByteBuffer b) {
        return b.getInt(WAKEUP_FD_OFFSET);
    }

    /** The owner disarms; returns the flag as it was (0: a producer took it first). */
    static int takeArmed(ByteBuffer b) {
        return (int) ShmRingsDescriptor.INT.getAndSet(b, ARMED_OFFSET, 0);
    }
}
