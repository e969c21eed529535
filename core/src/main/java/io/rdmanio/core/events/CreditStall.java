package io.rdmanio.core.events;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** A write found no send credit and no staging room: the writer waits for the reader. */
@Name("io.rdmanio.CreditStall")
@Label("Credit Stall")
@Category("rdmanio")
@Description("A write found the peer's receive ring and this side's staging full and took nothing")
public final class CreditStall extends Event {

    @Label("Fabric")
    String fabric;

    @Label("Remote Address")
    String remote;

    /** Commits one if a recording wants it. */
    static void emit(String fabric, Object remote) {
        CreditStall e = new CreditStall();
        if (e.isEnabled()) {
            e.fabric = fabric;
            e.remote = String.valueOf(remote);
            e.commit();
        }
    }
}
