package io.rdmanio.core.fabric;

import java.io.IOException;

/**
 * Delivers connection-manager events in order. Polling is serialized by the caller; the notifier contract is
 * the same as {@link CompletionQueue#requestNotify}.
 */
public interface EventChannel extends AutoCloseable {

    /** The next event, or {@code null} if none is pending. Never blocks. */
    CmEvent poll() throws IOException;

    /** Runs {@code notifier} once when an event is pending (at once if one already is). */
    void requestNotify(Notifier notifier) throws IOException;

    @Override
    void close();
}
