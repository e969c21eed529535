package io.rdmanio.selector.config;

import io.rdmanio.core.engine.Engine;
import java.io.IOException;
import java.net.InetSocketAddress;

/** Gives the engine of the fabric that should carry a connection, per {@code rdmanio.fabric}. Thread-safe. */
public interface EngineSource {

    /**
     * The engine for a connection to {@code peer}, or for a listener on {@code peer} when {@code listening}.
     *
     * @throws IOException naming why no fabric can carry it (no device, no native library, unknown fabric)
     */
    Engine engineFor(InetSocketAddress peer, boolean listening) throws IOException;
}
