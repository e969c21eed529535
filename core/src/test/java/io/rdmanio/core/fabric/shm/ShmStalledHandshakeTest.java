package io.rdmanio.core.fabric.shm;

import static io.rdmanio.core.fabric.shm.ShmTestSupport.frame;
import static io.rdmanio.core.fabric.shm.ShmTestSupport.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.EngineConfig;
import io.rdmanio.core.engine.Engines;
import io.rdmanio.core.engine.Listener;
import io.rdmanio.core.engine.Readiness;
import io.rdmanio.core.protocol.HandshakeDescriptor;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Handshakes that a local peer opens and never finishes (it takes the listener's ACCEPT and never answers READY, as
 * a client stopped by a signal in the middle of its connect does) hold places in the listener's accept queue. Once
 * they have outlasted the listener's handshake bound (10 s), a request that waits for a place makes the listener
 * give up the oldest: the waiting client connects, and the stalled peer is told its connection ended. Before, they
 * held the queue for as long as they stayed open, and every new client of a full listener timed out.
 */
@Timeout(120)
class ShmStalledHandshakeTest extends WithShmDirectory {

    private static final int PORT = 40996;

    @Test
    void handshakesNeverFinishedGiveTheirPlacesToAWaitingClient() throws Exception {
        try (ShmFabric serverFabric = ShmTestSupport.open(dir); ShmFabric clientFabric = ShmTestSupport.open(dir)) {
            Engine server = Engines.open(serverFabric, EngineConfig.DEFAULT);
            Engine client = Engines.open(clientFabric, EngineConfig.DEFAULT);
            InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), PORT);
            // Backlog 1: an accept queue of two places, both taken by peers that stop after the listener's ACCEPT.
            Listener listener = server.listen(at, 1, ConnectionOptions.DEFAULT);
            List<SocketChannel> stalled = new ArrayList<>();
            try {
                for (int i = 0; i < 2; i++) {
                    SocketChannel raw = SocketChannel.open(StandardProtocolFamily.UNIX);
                    stalled.add(raw);
                    raw.connect(UnixDomainSocketAddress.of(serverFabric.rendezvousPath(at)));
                    EngineConfig cfg = EngineConfig.DEFAULT;
                    ByteBuffer handshake = HandshakeDescriptor.allocate(HandshakeDescriptor.VERSION,
                        HandshakeDescriptor.REASON_NONE, cfg.slotSize(), cfg.ringDepth(), cfg.controlSlots(), i + 1);
                    ByteBuffer f = frame(ShmLink.REQUEST,
                        request(clientFabric, "127.0.0.1", "127.0.0.1", PORT, handshake));
                    while (f.hasRemaining()) {
                        raw.write(f);
                    }
                    assertEquals(ShmLink.ACCEPT, nextMessage(raw), "the listener answers the request");
                }
                Connection c = client.connect(at, ConnectionOptions.DEFAULT);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!c.finishConnect()) {
                    assertTrue(System.nanoTime() - deadline < 0, "the waiting client never connected");
                    c.await(Readiness.CONNECT, TimeUnit.MILLISECONDS.toNanos(200));
                }
                Connection accepted = null;
                while (accepted == null && System.nanoTime() - deadline < 0) {
                    accepted = listener.accept();
                    if (accepted == null) {
                        listener.await(Readiness.ACCEPT, TimeUnit.MILLISECONDS.toNanos(200));
                    }
                }
                assertNotNull(accepted, "the listener has the waiting client's connection to accept");
                // The oldest handshake gave its place (the other, younger, keeps its own while nobody waits).
                assertEquals(ShmLink.DISCONNECT, nextMessage(stalled.get(0)),
                    "the stalled peer is told its connection ended");
                accepted.close();
                c.close();
            } finally {
                for (SocketChannel raw : stalled) {
                    raw.close();
                }
                listener.close();
                client.close();
                server.close();
            }
        }
    }

    /** The type of the next message on {@code raw} (doorbell bytes skipped); -1 at the end of the stream. */
    private static int nextMessage(SocketChannel raw) throws IOException {
        ByteBuffer one = ByteBuffer.allocate(1);
        while (true) {
            one.clear();
            if (raw.read(one) < 0) {
                return -1;
            }
            byte type = one.get(0);
            if (type == ShmLink.DOORBELL) {
                continue;
            }
            ByteBuffer length = ByteBuffer.allocate(2);
            while (length.hasRemaining()) {
                if (raw.read(length) < 0) {
                    return -1;
                }
            }
            ByteBuffer body = ByteBuffer.allocate(Short.toUnsignedInt(length.getShort(0)));
            while (body.hasRemaining()) {
                if (raw.read(body) < 0) {
                    return -1;
                }
            }
            return type;
        }
    }
}
