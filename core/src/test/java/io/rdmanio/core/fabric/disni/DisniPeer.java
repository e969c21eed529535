package io.rdmanio.core.fabric.disni;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.EngineConfig;
import io.rdmanio.core.engine.Engines;
import io.rdmanio.core.fabric.Fabrics;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;

/**
 * A second process for {@link DisniEngineTest}: connects to {@code HOST PORT} over the disni fabric, prints
 * {@code CONNECTED}, then streams bytes until it has sent {@code LIMIT} bytes or is killed.
 */
public final class DisniPeer {

    private DisniPeer() {
    }

    public static void main(String[] args) throws Exception {
        InetSocketAddress remote = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        long limit = Long.parseLong(args[2]);
        try (DisniFabric fabric = (DisniFabric) Fabrics.open("disni", Map.of());
             Engine engine = Engines.open(fabric, EngineConfig.DEFAULT)) {
            Connection c = Blocking.connect(engine, remote);
            System.out.println("CONNECTED");
            System.out.flush();
            ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 16);
            for (long sent = 0; sent < limit; sent += chunk.capacity()) {
                chunk.clear();
                Blocking.writeFully(c, chunk);
            }
            c.close();
        }
    }
}
