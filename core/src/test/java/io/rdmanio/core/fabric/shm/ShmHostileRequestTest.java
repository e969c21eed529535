package io.rdmanio.core.fabric.shm;

import static io.rdmanio.core.fabric.shm.ShmTestSupport.expect;
import static io.rdmanio.core.fabric.shm.ShmTestSupport.frame;
import static io.rdmanio.core.fabric.shm.ShmTestSupport.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.EventChannel;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A local process that speaks to a listener's rendezvous socket without following the handshake (a message of no
 * known type, a request cut short, another protocol, an address that is a host name, a request for another
 * listener's address, a second request on one connection) gets a REJECT naming what was wrong, as a refused
 * client does, and the listener goes on serving well-formed requests. Before, most of these were closed without a
 * word, a host name was looked up on the watcher thread that serves every connection, and the addresses a request
 * claimed were handed to the application as they came.
 */
class ShmHostileRequestTest extends WithShmDirectory {

    private static final int PORT = 40997;

    @Test
    void eachMalformedRequestIsRefusedWithItsReasonAndTheListenerServesOthers() throws Exception {
        try (ShmFabric fabric = ShmTestSupport.open(dir)) {
            InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), PORT);
            EventChannel events = fabric.createEventChannel();
            CmId listener = fabric.createId(events);
            listener.bind(at);
            listener.listen(4);
            Path socket = fabric.rendezvousPath(at);

            assertRefused(socket, "bad message from the peer", frame((byte) 9, ByteBuffer.allocate(0)));
            assertRefused(socket, "a malformed request",
                frame(ShmLink.REQUEST, ByteBuffer.allocate(8).putInt(ShmCmId.MAGIC).putInt(ShmCmId.VERSION).flip()));
            assertRefused(socket, "not a request of the shm fabric",
                frame(ShmLink.REQUEST, ByteBuffer.allocate(8).putInt(0x12345678).putInt(ShmCmId.VERSION).flip()));
            assertRefused(socket, "the peer speaks shm protocol version 99",
                frame(ShmLink.REQUEST, ByteBuffer.allocate(8).putInt(ShmCmId.MAGIC).putInt(99).flip()));
            assertRefused(socket, "not an IP address literal: 'nonexistent.invalid'",
                frame(ShmLink.REQUEST, request(fabric, "nonexistent.invalid", "127.0.0.1", PORT)));
            assertRefused(socket, "the request is for /10.9.8.7:443, this listener is at",
                frame(ShmLink.REQUEST, request(fabric, "127.0.0.1", "10.9.8.7", 443)));
            ByteBuffer good = request(fabric, "127.0.0.1", "127.0.0.1", PORT);
            assertRefused(socket, "a second request on one connection",
                frame(ShmLink.REQUEST, good), frame(ShmLink.REQUEST, good));
            // The second request's connection was offered to the application before it failed: take that first.
            expect(events, CmEvent.Type.CONNECT_REQUEST).id().close();

            // A well-formed connect is still served.
            CmId client = ShmTestSupport.connecting(fabric, fabric.createEventChannel(), at);
            CmEvent request = expect(events, CmEvent.Type.CONNECT_REQUEST);
            assertEquals(at, request.id().localAddress());
            request.id().close();
            client.close();
            listener.close();
        }
    }

    /** Addresses in a request are IP literals, read without a name lookup; anything else is refused. */
    @Test
    void onlyIpLiteralsAreTakenAsAddresses() throws Exception {
        assertEquals(InetAddress.getByName("127.0.0.1"), ShmCmId.literal("127.0.0.1"));
        assertEquals(InetAddress.getByName("::1"), ShmCmId.literal("::1"));
        assertEquals(InetAddress.getByName("::ffff:10.0.0.1"), ShmCmId.literal("::ffff:10.0.0.1"));
        for (String bad : new String[] {"localhost", "1.2.3.4.5", "1.2.3", "abc", "", "10.0.0.1x", "::g"}) {
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ShmCmId.literal(bad), bad);
            assertTrue(e.getMessage().contains("not an IP address literal"), e.getMessage());
        }
    }

    /**
     * Sends {@code frames} on a fresh connection to {@code socket}; the answer is a REJECT whose reason holds
     * {@code why}.
     */
    private static void assertRefused(Path socket, String why, ByteBuffer... frames) throws IOException {
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(socket));
            for (ByteBuffer f : frames) {
                ByteBuffer d = f.duplicate();
                while (d.hasRemaining()) {
                    c.write(d);
                }
            }
            c.configureBlocking(false);
            ByteBuffer in = ByteBuffer.allocate(4096);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() - deadline < 0) {
                if (c.read(in) < 0) {
                    break;
                }
                if (in.position() >= 3 && in.position() >= 3 + Short.toUnsignedInt(in.getShort(1))) {
                    break;
                }
                Thread.onSpinWait();
            }
            in.flip();
            assertTrue(in.remaining() >= 3, "an answer to " + why);
            assertEquals(ShmLink.REJECT, in.get(), "a REJECT for " + why);
            in.getShort();
            String reason = ShmLink.getString(in);
            assertTrue(reason.startsWith("connection refused: ") && reason.contains(why), reason);
        }
    }
}
