package io.rdmanio.core.engine;

/**
 * Told when the readiness of a connection or listener may have changed. Runs on whichever thread drives
 * progress, possibly while the engine's progress lock is held: it must be quick, must not block and must not
 * call back into the engine (a selector queues its key and wakes its own thread).
 */
@FunctionalInterface
public interface ReadinessListener {
    void readinessChanged(Object source);
}
