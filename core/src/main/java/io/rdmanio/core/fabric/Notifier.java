package io.rdmanio.core.fabric;

/** Called once when an armed queue or channel has something to poll. Must be quick and must not block. */
@FunctionalInterface
public interface Notifier {
    void signal();
}
