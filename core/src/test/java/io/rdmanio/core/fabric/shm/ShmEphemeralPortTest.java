package io.rdmanio.core.fabric.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.EngineConfig;
import io.rdmanio.core.engine.Engines;
import io.rdmanio.core.engine.Listener;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * An shm connection that bound no port connects from one the kernel gives and holds, as a TCP socket's: two
 * processes (two fabrics here, each with its own state, as two processes have) never show one server the same
 * address, and no TCP socket of the host can take a port a live shm connection shows.
 */
class ShmEphemeralPortTest extends WithShmEngines {

    private static final int EACH = 100;

    @Test
    void twoProcessesNeverShowAServerTheSameAddressAndTheKernelHoldsEachPort() throws Exception {
        try (ShmFabric otherFabric = ShmTestSupport.open(dir);
             Engine other = Engines.open(otherFabric, EngineConfig.DEFAULT)) {
            Listener listener = server.listen(new InetSocketAddress("127.0.0.1", 0), EACH * 2 + 8,
                ConnectionOptions.DEFAULT);
            List<Connection> clients = new ArrayList<>();
            for (int i = 0; i < EACH; i++) {
                clients.add(client.connect(listener.localAddress(), ConnectionOptions.DEFAULT));
                clients.add(other.connect(listener.localAddress(), ConnectionOptions.DEFAULT));
            }
            List<Connection> accepted = new ArrayList<>();
            long deadline = System.nanoTime() + ShmTestSupport.TIMEOUT_NANOS;
            int connected = 0;
            while (accepted.size() < clients.size() || connected < clients.size()) {
                client.progress();
                other.progress();
                server.progress();
                Connection a;
                while ((a = listener.accept()) != null) {
                    accepted.add(a);
                }
                while (connected < clients.size() && clients.get(connected).finishConnect()) {
                    connected++;
                }
                if (System.nanoTime() - deadline > 0) {
                    fail(accepted.size() + " accepted and " + connected + " connected of " + clients.size());
                }
            }
            Set<InetSocketAddress> seen = new HashSet<>();
            for (Connection a : accepted) {
                InetSocketAddress from = a.remoteAddress();
                if (!seen.add(from)) {
                    fail("two connections show the server " + from);
                }
            }
            Set<InetSocketAddress> shown = new HashSet<>();
            for (Connection c : clients) {
                shown.add(c.localAddress());
            }
            assertEquals(seen, shown, "each client's own address is the one the server sees");
            InetSocketAddress first = clients.get(0).localAddress();
            InetSocketAddress second = clients.get(1).localAddress();
            for (InetSocketAddress held : List.of(first, second)) {
                assertThrows(BindException.class, () -> bindTcp(held), "a TCP socket took " + held);
            }
            for (Connection c : clients) {
                c.close();
            }
            for (Connection a : accepted) {
                a.close();
            }
            long released = System.nanoTime() + ShmTestSupport.TIMEOUT_NANOS;
            for (InetSocketAddress held : List.of(first, second)) {
                while (true) {
                    client.progress();
                    other.progress();
                    try {
                        bindTcp(held);
                        break;
                    } catch (BindException stillHeld) {
                        if (System.nanoTime() - released > 0) {
                            throw new AssertionError("the port of a closed connection is still held: " + held,
                                stillHeld);
                        }
                        Thread.sleep(5);
                    }
                }
            }
        }
    }

    private static void bindTcp(InetSocketAddress address) throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(address);
        }
    }
}
