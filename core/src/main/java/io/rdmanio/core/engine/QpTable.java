package io.rdmanio.core.engine;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The engine's connections by queue-pair number, which every fabric keeps to 24 bits (as verbs does): pages of
 * 4,096 entries under a directory of 4,096, a page made when its first queue pair arrives and dropped when its
 * last leaves. A lookup (once per completion) takes no lock and allocates nothing; adding or removing a queue pair
 * costs the same however many connections are open (a copy-on-write map copied all of them on every connect and
 * close: quadratic in a burst of connections).
 *
 * <p>Lookups from any thread; {@link #put} and {@link #remove} serialized by the caller (the engine's setup lock).
 */
final class QpTable<T> {

    private static final int BITS = 12;
    private static final int SIZE = 1 << BITS;
    private static final int MASK = SIZE - 1;

    private final AtomicReferenceArray<AtomicReferenceArray<T>> pages = new AtomicReferenceArray<>(SIZE);
    /** Entries per page; caller's lock. */
    private final int[] used = new int[SIZE];
    /** Entries in all; caller's lock. */
    private int size;

    /** The entry of {@code qpNum}, or {@code null}. */
    T get(int qpNum) {
        if ((qpNum >>> (2 * BITS)) != 0) {
            return null;
        }
        AtomicReferenceArray<T> page = pages.get(qpNum >>> BITS);
        return page == null ? null : page.get(qpNum & MASK);
    }

    /** Sets the entry of {@code qpNum}, replacing any. */
    void put(int qpNum, T value) {
        if ((qpNum >>> (2 * BITS)) != 0) {
            throw new IllegalArgumentException("a queue-pair number has 24 bits: " + qpNum);
        }
        int p = qpNum >>> BITS;
        AtomicReferenceArray<T> page = pages.get(p);
        if (page == null) {
            page = new AtomicReferenceArray<>(SIZE);
            pages.set(p, page);
        }
        if (page.getAndSet(qpNum & MASK, value) == null) {
            used[p]++;
            size++;
        }
    }

    /** Removes the entry of {@code qpNum} if it is {@code value}. */
    void remove(int qpNum, T value) {
        if (value == null || (qpNum >>> (2 * BITS)) != 0) {
            return;
        }
        int p = qpNum >>> BITS;
        AtomicReferenceArray<T> page = pages.get(p);
        if (page != null && page.compareAndSet(qpNum & MASK, value, null)) {
            size--;
            if (--used[p] == 0) {
                pages.set(p, null);
            }
        }
    }

    int size() {
        return size;
    }
}
