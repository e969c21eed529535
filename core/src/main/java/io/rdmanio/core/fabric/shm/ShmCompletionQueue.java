package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.Notifier;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectableChannel;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A completion queue: a view over the completion rings of the queue pairs attached to it (their local send
 * completions and the shared receive rings their peers fill), with a ready map ({@link ShmReadyMapDescriptor}) in
 * a region peers map: whoever releases a completion sets the queue pair's bit, so a poll visits only the queue
 * pairs that have completions, and arming is one flag, however many queue pairs are attached. Polling takes no
 * lock, makes no system call and allocates nothing.
 *
 * <p>Callers serialize {@link #poll} (it is the single consumer of every ring it reads and of the map).
 * {@link #requestNotify} sets the map's armed flag, then re-checks it; a producer that finds the flag set clears it
 * and rings: for a waiter that relies on the fabric, its connection's socket, whose doorbell the watcher reads to
 * run the notifier; for a waiter whose selector watches {@link #wakeupChannel()}, this queue's wakeup pipe, whose
 * byte wakes that selector at once (one hop: no watcher between the peer and the waiting thread). Local completions
 * run the notifier on the producing thread.
 *
 * <p>The wakeup pipe needs librdmanio-shm (a peer opens its write end through {@code /proc/PID/fd} for non-blocking
 * writes, refusing anything but a pipe); without it, or with {@code rdmanio.shm.wakeupChannel=false}, the queue
 * offers no wakeup channel and every wait is relayed by the watcher.
 *
 * <p>A queue holds at most {@link #capacity} queue pairs (its entries, at least 64): a queue pair needs at least
 * one entry for its send and one for its receive completions, so a queue full of queue pairs would overflow on
 * verbs too.
 */
final class ShmCompletionQueue implements CompletionQueue {

    final ShmFabric fabric;
    final int entries;
    private final AtomicReference<Notifier> armed = new AtomicReference<>();
    /** The ready map: shared memory peers set bits in; its rkey travels in each connection's rings. */
    private final MemoryRegion mapRegion;
    final ByteBuffer map;
    final int capacity;
    private final int summaryWords;
    private final int words;
    /** Queue pair by ready-map index; written under this queue's monitor, read by the poller. */
    private final AtomicReferenceArray<ShmQueuePair> byIndex;
    private volatile boolean closed;
    /** The wakeup pipe ({@code null} without one): a selector watches its source, peers write its sink. */
    private final Pipe wakeupPipe;
    /** Its sink's descriptor number, published in the ready map; -1 without one. */
    private final int wakeupFd;
    /** Consumer only: the armed flag's bits as this side last set them, to know when a producer took it. */
    private int lastArmed;
    /** Consumer only: a producer took a watched arm and its byte was not read yet. */
    private boolean byteOwed;
    private final ByteBuffer drain = ByteBuffer.allocateDirect(64);

    // ---- guarded by this
    private final int[] freeIndexes;
    private int freeCount;

    /** Consumer only: the summary word the next poll starts at, so one busy word does not starve the others. */
    private int next;

    ShmCompletionQueue(ShmFabric fabric, int entries) throws IOException {
        this.fabric = fabric;
        this.entries = entries;
        this.capacity = ShmReadyMapDescriptor.capacityFor(entries);
        this.summaryWords = ShmReadyMapDescriptor.summaryWords(capacity);
        this.words = capacity >>> 6;
        this.mapRegion = fabric.allocate(ShmReadyMapDescriptor.fileLength(capacity),
            MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_WRITE);
        this.map = mapRegion.buffer();
        Pipe wakeup = fabric.wakeupChannels && ShmNatives.available() ? openWakeupPipe() : null;
        int wakeupFd = -1;
        if (wakeup != null) {
            try {
                wakeupFd = ShmNatives.fdVal(wakeup.sink());
            } catch (IOException | RuntimeException e) {
                closeQuietly(wakeup);
            }
        }
        this.wakeupPipe = wakeupFd >= 0 ? wakeup : null;
        this.wakeupFd = wakeupFd;
        ShmReadyMapDescriptor.writeHeader(map, capacity, wakeupFd);
        this.byIndex = new AtomicReferenceArray<>(capacity);
        this.freeIndexes = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            freeIndexes[i] = capacity - 1 - i;
        }
        this.freeCount = capacity;
    }

    /** The rkey peers map the ready map with. */
    int mapRkey() {
        return mapRegion.rkey();
    }

    /** Attaches {@code qp}; returns its index in the ready map. */
    synchronized int attach(ShmQueuePair qp) throws FabricException {
        if (closed) {
            throw new FabricException("completion queue is closed");
        }
        if (freeCount == 0) {
            throw new FabricException("the completion queue of " + entries + " entries already serves " + capacity
                + " queue pairs, its most (each needs an entry for its sends and one for its receives): create"
                + " another completion queue");
        }
        int i = freeIndexes[--freeCount];
        byIndex.set(i, qp);
        return i;
    }

    synchronized void detach(ShmQueuePair qp, int index) {
        if (index >= 0 && byIndex.get(index) == qp) {
            byIndex.set(index, null);
            freeIndexes[freeCount++] = index;
        }
    }

    /** A local producer (a send completion, a flush): marks {@code index} ready; the caller then {@link #fire}s. */
    void markReady(int index) {
        if (index >= 0 && !closed) {
            ShmReadyMapDescriptor.markReady(map, capacity, index);
        }
    }

    @Override
    public int poll(Completions out) throws FabricException {
        Objects.requireNonNull(out, "out");
        if (closed) {
            throw new FabricException("completion queue is closed");
        }
        int cap = out.capacity();
        int k = 0;
        int start = next < summaryWords ? next : 0;
        for (int j = 0; j < summaryWords && k < cap; j++) {
            int s = start + j < summaryWords ? start + j : start + j - summaryWords;
            long sum = ShmReadyMapDescriptor.takeSummary(map, s);
            while (sum != 0) {
                if (k >= cap) {
                    ShmReadyMapDescriptor.restoreSummary(map, s, sum);
                    break;
                }
                int w = (s << 6) + Long.numberOfTrailingZeros(sum);
                sum &= sum - 1;
                if (w >= words) {
                    continue; // a summary bit no producer of this map sets: a peer's stray write
                }
                long bits = ShmReadyMapDescriptor.takeWord(map, capacity, w);
                while (bits != 0) {
                    if (k >= cap) {
                        ShmReadyMapDescriptor.restoreWord(map, capacity, w, bits);
                        break;
                    }
                    int i = (w << 6) + Long.numberOfTrailingZeros(bits);
                    bits &= bits - 1;
                    ShmQueuePair qp = byIndex.get(i);
                    if (qp == null) {
                        continue; // a queue pair gone, or a stray bit: nothing to poll
                    }
                    k = qp.drain(this, out, k);
                    if (k >= cap && qp.hasPending(this)) {
                        // More than fit: look again next time.
                        ShmReadyMapDescriptor.markReady(map, capacity, i);
                    }
                }
            }
        }
        next = start + 1;
        out.count(k);
        return k;
    }

    @Override
    public void requestNotify(Notifier notifier) throws FabricException {
        requestNotify(notifier, false);
    }

    @Override
    public void requestNotify(Notifier notifier, boolean watched) throws FabricException {
        Objects.requireNonNull(notifier, "notifier");
        if (closed) {
            throw new FabricException("completion queue is closed");
        }
        int bits = watched && wakeupPipe != null ? ShmReadyMapDescriptor.ARMED_WATCHED
            : ShmReadyMapDescriptor.ARMED_RELAY;
        armed.set(notifier);
        int before = ShmReadyMapDescriptor.setArmed(map, bits);
        if (wakeupPipe != null
            && (byteOwed || before == 0 && (lastArmed & ShmReadyMapDescriptor.ARMED_WATCHED) != 0)) {
            // A producer took a watched arm and writes a byte: consumed here, or a watching selector would not
            // block. It may write it after this read (descheduled between taking the arm and ringing): then the
            // next arms read again until it came, or it would stay (the flag set since) and keep that selector
            // returning at once while nothing completes.
            byteOwed = !drainWakeup();
        }
        lastArmed = before | bits;
        if (ShmReadyMapDescriptor.anyReady(map, capacity)) {
            // Fired here: a flag left armed would only cost a producer a needless doorbell. A producer that took
            // it first may ring: the next arm reads then.
            if (ShmReadyMapDescriptor.takeArmed(map) != 0) {
                lastArmed = 0;
            }
            fire();
        }
    }

    @Override
    public SelectableChannel wakeupChannel() {
        return wakeupPipe == null ? null : wakeupPipe.source();
    }

    @Override
    public void withdrawRelay() {
        if (wakeupPipe != null) {
            ShmReadyMapDescriptor.clearArmed(map, ShmReadyMapDescriptor.ARMED_RELAY);
        }
    }

    /** Reads whatever the wakeup pipe holds (non-blocking); whether there was a byte (or nothing to wait for). */
    private boolean drainWakeup() {
        boolean any = false;
        try {
            while (true) {
                drain.clear();
                if (wakeupPipe.source().read(drain) <= 0) {
                    return any;
                }
                any = true;
            }
        } catch (IOException e) {
            return true; // closed meanwhile: nothing to consume, ever
        }
    }

    private static Pipe openWakeupPipe() {
        try {
            Pipe p = ShmWatcher.jdkProvider().openPipe();
            p.source().configureBlocking(false);
            p.sink().configureBlocking(false);
            return p;
        } catch (IOException e) {
            return null;
        }
    }

    private static void closeQuietly(Pipe p) {
        try {
            p.source().close();
        } catch (IOException e) {
            // closing
        }
        try {
            p.sink().close();
        } catch (IOException e) {
            // closing
        }
    }

    /** Runs the armed notifier, if any, once. Called by producers and by the watcher on a doorbell. */
    void fire() {
        if (armed.get() != null) {
            Notifier n = armed.getAndSet(null);
            if (n != null) {
                n.signal();
            }
        }
    }

    /**
     * Watcher, periodically: repairs what a peer may have written into the parts of this queue's ready map that no
     * one of its queue pairs owns (the map is shared by the queue pairs of many peers, so no one connection is to
     * blame): the header is written back, summary bits naming no word are cleared (a poll skips them anyway), and
     * an armed flag that is neither 0 nor 1, which no producer would clear and ring, is cleared and the notifier
     * run (a wakeup that finds nothing is harmless; a lost one is not). A bit pattern in the words costs a poll
     * looks only, and a completion a peer leaves unmarked is marked by its queue pair's periodic check.
     */
    void check() {
        if (closed) {
            return;
        }
        if ((int) ShmRingsDescriptor.INT.getVolatile(map, 0) != ShmReadyMapDescriptor.MAGIC
            || map.getInt(4) != ShmReadyMapDescriptor.VERSION
            || map.getInt(ShmReadyMapDescriptor.CAPACITY_OFFSET) != capacity
            || ShmReadyMapDescriptor.wakeupFd(map) != wakeupFd) {
            ShmReadyMapDescriptor.writeHeader(map, capacity, wakeupFd);
        }
        int lastWords = words - ((summaryWords - 1) << 6);
        if (lastWords < 64) {
            long stray = ~((1L << lastWords) - 1);
            int at = ShmReadyMapDescriptor.SUMMARY_OFFSET + (summaryWords - 1) * 8;
            if (((long) ShmRingsDescriptor.LONG.getVolatile(map, at) & stray) != 0) {
                ShmRingsDescriptor.LONG.getAndBitwiseAnd(map, at, ~stray);
            }
        }
        int a = (int) ShmRingsDescriptor.INT.getVolatile(map, ShmReadyMapDescriptor.ARMED_OFFSET);
        if ((a < 0 || a > (ShmReadyMapDescriptor.ARMED_RELAY | ShmReadyMapDescriptor.ARMED_WATCHED))
            && ShmRingsDescriptor.INT.compareAndSet(map, ShmReadyMapDescriptor.ARMED_OFFSET, a, 0)) {
            fire();
        }
    }

    @Override
    public void close() {
        closed = true;
        armed.set(null);
        if (wakeupPipe != null) {
            closeQuietly(wakeupPipe);
        }
        mapRegion.close();
        fabric.closed(this);
    }
}
