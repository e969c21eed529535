package io.rdmanio.core.events;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Timespan;

/** A fabric connection finished its handshake and is open. */
@Name("io.rdmanio.ConnectionOpened")
@Label("Connection Opened")
@Category("rdmanio")
@Description("A connection carried by a fabric finished its setup and handshake")
public final class ConnectionOpened extends Event {

    @Label("Fabric")
    String fabric;

    @Label("Remote Address")
    String remote;

    @Label("Side")
    @Description("client (this end connected) or server (accepted)")
    String side;

    @Label("Setup Time")
    @Description("From the start of the setup to the end of the handshake")
    @Timespan(Timespan.NANOSECONDS)
    long setup;

    /** Commits one if a recording wants it. */
    static void emit(String fabric, Object remote, boolean client, long setupNanos) {
        ConnectionOpened e = new ConnectionOpened();
        if (e.isEnabled()) {
            e.fabric = fabric;
            e.remote = String.valueOf(remote);
            e.side = client ? "client" : "server";
            e.setup = setupNanos;
            e.commit();
        }
    }
}
