package io.rdmanio.selector.config;

import java.net.InetSocketAddress;

/** Decides, once per socket, which transport carries it. Thread-safe. */
public interface Router {

    /** For a server socket's bind. */
    Route forBind(InetSocketAddress local);

    /** For an unbound socket's connect. */
    Route forConnect(InetSocketAddress remote);
}
