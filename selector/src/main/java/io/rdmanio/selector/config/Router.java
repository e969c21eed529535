package io.rdmanio.selector.config;

import java.net.InetSocketAddress;

/** Decides, once per socket, which transport carries it. Thread-safe. */
public interface Router {

    /** For a server socket's bind. */
    Route forBind(InetSocketAddress local);

    /** For an unbound socket's connect. */
    Route forConnect(InetSocketAddress remote);

    /** Whether no bind and no connect can be routed to a fabric (no rule, or only {@code tcp} rules). */
    default boolean routesNothing() {
        return false;
    }
}
