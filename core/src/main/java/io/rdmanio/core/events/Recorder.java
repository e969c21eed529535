package io.rdmanio.core.events;

import jdk.jfr.FlightRecorder;

/**
 * Where rdmanio emits its events: each call first asks whether the Flight Recorder was started in this JVM (a
 * static flag of the JDK's), and only then touches an event class. Loading the first {@code jdk.jfr.Event} class
 * costs a JVM about 100 ms (measured on the routed hello world's first connection), which a process that never
 * records must not pay; one that starts a recording later gets the events from then on.
 */
public final class Recorder {

    private Recorder() {
    }

    private static boolean on() {
        return FlightRecorder.isInitialized();
    }

    public static void connectionOpened(String fabric, Object remote, boolean client, long setupNanos) {
        if (on()) {
            ConnectionOpened.emit(fabric, remote, client, setupNanos);
        }
    }

    public static void connectionFailed(String fabric, Object remote, String message, boolean protocolError) {
        if (on()) {
            ConnectionFailed.emit(fabric, remote, message, protocolError);
        }
    }

    public static void creditStall(String fabric, Object remote) {
        if (on()) {
            CreditStall.emit(fabric, remote);
        }
    }

    public static void fallback(Object remote, String reason) {
        if (on()) {
            Fallback.emit(remote, reason);
        }
    }
}
