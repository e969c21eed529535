package io.rdmanio.selector;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What a test opened, closed after it, last first, best effort: the test has already reported what matters.
 * Safe to track from the threads a test starts (a server accepting).
 */
public final class Tracked {

    private final List<AutoCloseable> resources = new CopyOnWriteArrayList<>();

    /** Keeps {@code r} to close after the test; returns it. */
    public <T extends AutoCloseable> T track(T r) {
        resources.add(r);
        return r;
    }

    /** Closes everything tracked so far, last first, and forgets it. */
    public void closeAll() {
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception ignore) {
                // best effort
            }
        }
        resources.clear();
    }
}
