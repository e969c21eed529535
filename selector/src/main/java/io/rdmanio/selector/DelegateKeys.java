package io.rdmanio.selector;

import java.io.IOException;
import java.nio.channels.SelectableChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * The keys of a channel that always stands on a JDK channel (a pipe end, a datagram channel): the part of
 * {@link RoutedChannel} such channels share ({@link JdkBackedChannel}). A key cancelled on the rdmanio selector is dropped from the inner JDK
 * selector only at its next select; {@link #cancelInnerOfCancelled} drops it at once so that the JDK channel may be
 * switched to blocking mode, as java.nio allows once no valid key is left.
 *
 * <p>Thread-safe: guarded by this object.
 */
final class DelegateKeys {

    // -- this object's lock
    private final List<RdmaSelectionKey> keys = new ArrayList<>(2);

    synchronized void add(RdmaSelectionKey key) {
        keys.add(key);
    }

    synchronized void remove(RdmaSelectionKey key) {
        keys.remove(key);
    }

    /** implConfigureBlocking of a {@link JdkBackedChannel}: drop dead inner keys first when going blocking. */
    void configureBlocking(SelectableChannel jdk, boolean block) throws IOException {
        if (block) {
            cancelInnerOfCancelled();
        }
        jdk.configureBlocking(block);
    }

    synchronized void cancelInnerOfCancelled() {
        for (RdmaSelectionKey k : keys) {
            if (!k.isValid()) {
                k.cancelInner();
            }
        }
    }
}
