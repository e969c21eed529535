package io.rdmanio.core.events;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** A client that a rule meant for a fabric connected over TCP instead. */
@Name("io.rdmanio.Fallback")
@Label("Fallback to TCP")
@Category("rdmanio")
@Description("A client meant for a fabric (a both or auto rule) connected over TCP instead")
public final class Fallback extends Event {

    @Label("Remote Address")
    String remote;

    @Label("Reason")
    String reason;

    /** Commits one if a recording wants it. */
    static void emit(Object remote, String reason) {
        Fallback e = new Fallback();
        if (e.isEnabled()) {
            e.remote = String.valueOf(remote);
            e.reason = reason;
            e.commit();
        }
    }
}
