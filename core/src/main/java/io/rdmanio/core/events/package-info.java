/**
 * JDK Flight Recorder events of rdmanio, under the category "rdmanio": a connection opened over a fabric
 * ({@code io.rdmanio.ConnectionOpened}), one that failed ({@code io.rdmanio.ConnectionFailed}), a write that found
 * no send credit ({@code io.rdmanio.CreditStall}) and a client that fell back to TCP ({@code io.rdmanio.Fallback}).
 * Off unless a recording enables them ({@code -XX:StartFlightRecording}, {@code jcmd PID JFR.start}); emitted
 * through {@link io.rdmanio.core.events.Recorder}, which touches no event class in a JVM that never started the
 * Flight Recorder, on setup, failure and stall paths only, never per message.
 */
package io.rdmanio.core.events;
