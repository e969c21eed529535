package io.rdmanio.core.engine;

import java.util.Arrays;

/**
 * Copy-on-write arrays of readiness listeners: changed rarely (registration), read on every readiness change, so
 * firing iterates a plain array and never allocates (a list's iterator would, once per message).
 *
 * <p>Stateless; callers serialize updates and publish the result through a volatile field.
 */
final class ReadinessListeners {

    static final ReadinessListener[] NONE = new ReadinessListener[0];

    private ReadinessListeners() {
    }

    static ReadinessListener[] with(ReadinessListener[] current, ReadinessListener l) {
        for (ReadinessListener x : current) {
            if (x == l) {
                return current;
            }
        }
        ReadinessListener[] next = Arrays.copyOf(current, current.length + 1);
        next[current.length] = l;
        return next;
    }

    static ReadinessListener[] without(ReadinessListener[] current, ReadinessListener l) {
        for (int i = 0; i < current.length; i++) {
            if (current[i] == l) {
                ReadinessListener[] next = new ReadinessListener[current.length - 1];
                System.arraycopy(current, 0, next, 0, i);
                System.arraycopy(current, i + 1, next, i, current.length - i - 1);
                return next;
            }
        }
        return current;
    }
}
