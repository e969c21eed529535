package io.rdmanio.core.fabric.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Listener;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Thousands of shm connections held at once: more than the 4,096-region directory allowed (about 3,800), each
 * still carrying its own bytes exactly after all are open. Two fabrics of one JVM stand for the two processes
 * (each has its own region directory, pool and completion queues, as a process does).
 */
class ShmManyConnectionsTest extends WithShmEngines {

    private static final int CONNECTIONS = 5000;
    /** Connects in flight at once: below the listener's backlog. */
    private static final int BATCH = 256;

    @Test
    void fiveThousandConnectionsAreHeldAndEachCarriesItsOwnBytes() throws Exception {
        Listener listener = server.listen(new InetSocketAddress("127.0.0.1", 0), 1024, ConnectionOptions.DEFAULT);
        List<Connection> clients = new ArrayList<>(CONNECTIONS);
        List<Connection> accepted = new ArrayList<>(CONNECTIONS);
        long deadline = System.nanoTime() + ShmTestSupport.TIMEOUT_NANOS * 9;
        while (accepted.size() < CONNECTIONS) {
            int from = clients.size();
            int to = Math.min(CONNECTIONS, from + BATCH);
            for (int i = from; i < to; i++) {
                clients.add(client.connect(listener.localAddress(), ConnectionOptions.DEFAULT));
            }
            int connected = from;
            while (accepted.size() < to || connected < to) {
                client.progress();
                server.progress();
                Connection a;
                while ((a = listener.accept()) != null) {
                    accepted.add(a);
                }
                while (connected < to && clients.get(connected).finishConnect()) {
                    connected++;
                }
                if (System.nanoTime() - deadline > 0) {
                    fail("after " + accepted.size() + " accepted and " + connected + " connected of " + CONNECTIONS
                        + ", no progress within the timeout");
                }
            }
        }
        // Every client says who it is; the server side of each answers with what it read, plus one.
        ByteBuffer b = ByteBuffer.allocate(8);
        for (int i = 0; i < CONNECTIONS; i++) {
            b.clear();
            b.putLong(0, 0x5ca1e000_0000_0000L + i);
            assertEquals(8, clients.get(i).write(new ByteBuffer[] {b}, 0, 1));
        }
        for (Connection s : accepted) {
            long v = readLong(s);
            b.clear();
            b.putLong(0, v + 1);
            assertEquals(8, s.write(new ByteBuffer[] {b}, 0, 1));
        }
        for (int i = 0; i < CONNECTIONS; i++) {
            assertEquals(0x5ca1e000_0000_0000L + i + 1, readLong(clients.get(i)), "connection " + i);
        }
        assertEquals(0, clientFabric.receiverNotReadyCount());
        assertEquals(0, serverFabric.receiverNotReadyCount());
        for (Connection c : clients) {
            c.close();
        }
        for (Connection s : accepted) {
            s.close();
        }
        listener.close();
    }

    /** Reads exactly 8 bytes from {@code c}, driving both engines while it waits. */
    private long readLong(Connection c) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(8);
        long deadline = System.nanoTime() + ShmTestSupport.TIMEOUT_NANOS;
        while (b.hasRemaining()) {
            long n = c.read(new ByteBuffer[] {b}, 0, 1);
            assertTrue(n >= 0, "end of stream on " + c);
            if (n == 0) {
                client.progress();
                server.progress();
                if (System.nanoTime() - deadline > 0) {
                    fail("no bytes on " + c + " within the timeout");
                }
            }
        }
        return b.getLong(0);
    }
}
