package io.rdmanio.core.events;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** A fabric connection failed (refused, reset, a protocol error, a fabric error). */
@Name("io.rdmanio.ConnectionFailed")
@Label("Connection Failed")
@Category("rdmanio")
@Description("A connection carried by a fabric failed; the message names the cause")
public final class ConnectionFailed extends Event {

    @Label("Fabric")
    String fabric;

    @Label("Remote Address")
    String remote;

    @Label("Message")
    String message;

    @Label("Protocol Error")
    @Description("The peer broke the wire protocol")
    boolean protocolError;

    /** Commits one if a recording wants it. */
    static void emit(String fabric, Object remote, String message, boolean protocolError) {
        ConnectionFailed e = new ConnectionFailed();
        if (e.isEnabled()) {
            e.fabric = fabric;
            e.remote = String.valueOf(remote);
            e.message = message;
            e.protocolError = protocolError;
            e.commit();
        }
    }
}
