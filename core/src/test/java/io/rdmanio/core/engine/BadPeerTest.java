package io.rdmanio.core.engine;

import static io.rdmanio.core.protocol.FrameDescriptor.*;
import static org.junit.jupiter.api.Assertions.*;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.protocol.HandshakeDescriptor;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A raw peer sends what no engine would. The connection it talks to fails with an IOException naming the cause;
 * a healthy connection on the same engine carries on; the failed connection's slots go back to the pool.
 */
class BadPeerTest {

    private static final int SLOT = 1024;
    private static final EngineConfig CONFIG = EngineConfig.DEFAULT.withSlotSize(SLOT).withRingDepth(4);

    @FunctionalInterface
    interface Misdeed {
        void commit(RawPeer raw) throws IOException;
    }

    static Stream<Arguments> misdeeds() {
        return Stream.of(
            Arguments.of("unknown type", (Misdeed) raw -> raw.send(9, 0, 0, 0, HEADER_LENGTH, 4, 2),
                "unknown frame type 9"),
            Arguments.of("flags", (Misdeed) raw -> raw.send(TYPE_DATA, 0x80, 0, 0, HEADER_LENGTH, 4, 2),
                "flags 0x80 set in a DATA frame"),
            Arguments.of("urgent flag without its byte", (Misdeed) raw -> raw.send(TYPE_DATA, 1, 0, 0, HEADER_LENGTH, 4, 2),
                "payload length 0 in an URGENT DATA frame (must be 1)"),
            Arguments.of("reserved", (Misdeed) raw -> raw.send(TYPE_DATA, 0, 0x100, 0, HEADER_LENGTH, 4, 2),
                "reserved field 0x100 is not zero"),
            Arguments.of("length mismatch", (Misdeed) raw -> raw.send(TYPE_DATA, 0, 0, 10, HEADER_LENGTH + 5, 4, 2),
                "payload length 10 does not match the 29 bytes received"),
            Arguments.of("length beyond slot", (Misdeed) raw -> raw.send(TYPE_DATA, 0, 0, 5000, HEADER_LENGTH, 4, 2),
                "payload length 5000 exceeds the slot payload capacity 1000"),
            Arguments.of("truncated", (Misdeed) raw -> raw.send(TYPE_DATA, 0, 0, 0, 10, 4, 2),
                "truncated frame: 10 bytes received"),
            Arguments.of("larger than a slot", (Misdeed) raw -> raw.send(TYPE_DATA, 0, 0, 2048 - 24, 2048, 4, 2),
                "frame larger than the 1024-byte receive slot (local length error"),
            Arguments.of("credit backwards", (Misdeed) raw -> {
                raw.send(TYPE_DATA, 0, 0, 1, HEADER_LENGTH + 1, 4, 2);
                raw.send(TYPE_DATA, 0, 0, 1, HEADER_LENGTH + 1, 3, 2);
            }, "dataCredit went backwards (4 -> 3)"),
            Arguments.of("control credit backwards", (Misdeed) raw -> raw.send(TYPE_CREDIT, 0, 0, 0, HEADER_LENGTH, 4, 1),
                "controlCredit went backwards (2 -> 1)"),
            Arguments.of("credit beyond the window", (Misdeed) raw -> raw.send(TYPE_DATA, 0, 0, 0, HEADER_LENGTH, 1000, 2),
                "dataCredit 1000 exceeds what the peer can have granted"),
            Arguments.of("data after FIN", (Misdeed) raw -> {
                raw.send(TYPE_FIN, 0);
                raw.send(TYPE_DATA, 3);
            }, "DATA frame after FIN"),
            Arguments.of("payload on CREDIT", (Misdeed) raw -> raw.send(TYPE_CREDIT, 0, 0, 4, HEADER_LENGTH + 4, 4, 2),
                "payload length 4 in a CREDIT frame (must be 0)"),
            Arguments.of("version 1's HELLO", (Misdeed) raw -> raw.send(4, 0, 0, HandshakeDescriptor.LENGTH,
                HEADER_LENGTH + HandshakeDescriptor.LENGTH, 4, 2), "unknown frame type 4"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("misdeeds")
    void aMalformedFrameFailsOnlyItsConnection(String name, Misdeed misdeed, String expected) throws Exception {
        try (Pair p = new Pair(CONFIG); RawPeer raw = new RawPeer(p.fabric, SLOT)) {
            FabricConnection[] healthy = p.connect();
            int free = p.server.pool().freeSlots();
            long protocolErrors = p.server.stats().protocolErrors();
            CmEvent e = raw.connect(p, p.listener.localAddress(), raw.handshake(HandshakeDescriptor.VERSION));
            assertEquals(CmEvent.Type.ESTABLISHED, e.type());
            Connection[] victim = new Connection[1];
            p.await("the raw connection", () -> {
                try {
                    victim[0] = p.listener.accept();
                } catch (IOException x) {
                    throw new AssertionError(x);
                }
                return victim[0] != null;
            });
            assertTrue(p.server.pool().freeSlots() < free);
            misdeed.commit(raw);
            IOException failure = p.awaitFailure(victim[0]);
            String prefix = "protocol error from " + victim[0].remoteAddress() + ": ";
            assertTrue(failure.getMessage().startsWith(prefix + expected), failure.getMessage());
            // Sticky, for writes too.
            assertSame(failure, assertThrows(IOException.class, () -> Pair.write(victim[0], ByteBuffer.allocate(1))));
            assertEquals(protocolErrors + 1, p.server.stats().protocolErrors());
            // The healthy connection carries on.
            Pair.write(healthy[0], ByteBuffer.wrap(new byte[] {1, 2, 3}));
            ByteBuffer got = ByteBuffer.allocate(3);
            p.await("the healthy connection", () -> {
                try {
                    Pair.read(healthy[1], got);
                } catch (IOException x) {
                    throw new AssertionError(x);
                }
                return !got.hasRemaining();
            });
            assertArrayEquals(new byte[] {1, 2, 3}, got.array());
            // Nothing leaks: the failed connection's slots are back even before the application closes it.
            p.await("the failed connection's slots", () -> {
                try {
                    raw.pollCq();
                } catch (IOException x) {
                    throw new AssertionError(x);
                }
                return p.server.pool().freeSlots() == free;
            });
            victim[0].close();
            assertEquals(free, p.server.pool().freeSlots());
            assertEquals(0, p.fabric.receiverNotReadyCount());
        }
    }

    @Test
    void aClientOfAnotherVersionIsRejectedWithTheReason() throws Exception {
        try (Pair p = new Pair(CONFIG); RawPeer raw = new RawPeer(p.fabric, SLOT)) {
            CmEvent e = raw.connect(p, p.listener.localAddress(), raw.handshake(1));
            assertEquals(CmEvent.Type.REJECTED, e.type());
            ByteBuffer reject = e.privateData().duplicate().order(BYTE_ORDER);
            assertEquals(HandshakeDescriptor.REASON_VERSION, HandshakeDescriptor.reason(reject, reject.position()));
            assertEquals("rdmanio handshake rejected by " + p.listener.localAddress()
                    + ": protocol version 1 not supported (server speaks 2)",
                HandshakeDescriptor.describeRejection(p.listener.localAddress(), reject, raw.handshake(1)));
            assertNull(p.listener.accept());
            assertEquals(0, p.server.pool().slotsInUse());
        }
    }

    @Test
    void anAcceptOfAnotherVersionFailsTheConnect() throws Exception {
        try (Pair p = new Pair(CONFIG); RawPeer raw = new RawPeer(p.fabric, SLOT)) {
            Connection c = p.client.connect(raw.listen(), ConnectionOptions.DEFAULT);
            ByteBuffer request = raw.acceptOne(p, raw.handshake(1));
            assertEquals(HandshakeDescriptor.VERSION, HandshakeDescriptor.version(request, request.position()));
            ConnectException failure = awaitConnectFailure(p, raw, c);
            assertEquals("rdmanio handshake with " + c.remoteAddress() + " failed: the server's accept has protocol"
                + " version 1 not supported (this side speaks 2)", failure.getMessage());
            p.await("teardown", () -> p.client.pool().slotsInUse() == 0);
        }
    }

    @Test
    void anAcceptWithoutAHandshakeFailsTheConnect() throws Exception {
        try (Pair p = new Pair(CONFIG); RawPeer raw = new RawPeer(p.fabric, SLOT)) {
            Connection c = p.client.connect(raw.listen(), ConnectionOptions.DEFAULT);
            raw.acceptOne(p, ByteBuffer.allocate(0));
            ConnectException failure = awaitConnectFailure(p, raw, c);
            assertTrue(failure.getMessage().startsWith("rdmanio handshake with " + c.remoteAddress()
                + " failed: the server's accept has "), failure.getMessage());
            p.await("teardown", () -> p.client.pool().slotsInUse() == 0);
        }
    }

    @Test
    void framesTheServerSendsBeforeTheClientSeesEstablishedAreKeptInOrder() throws Exception {
        try (Pair p = new Pair(CONFIG); RawPeer raw = new RawPeer(p.fabric, SLOT)) {
            Connection c = p.client.connect(raw.listen(), ConnectionOptions.DEFAULT);
            raw.acceptOne(p);
            // Sent at once after the accept: the client's engine may meet them before its ESTABLISHED.
            raw.send(TYPE_DATA, 0, 0, 5, HEADER_LENGTH + 5, 4, 2);
            raw.send(TYPE_DATA, 0, 0, 3, HEADER_LENGTH + 3, 4, 2);
            raw.send(TYPE_FIN, 0);
            ByteBuffer got = ByteBuffer.allocate(16);
            long[] end = {0};
            p.await("eight bytes, then the end", () -> {
                try {
                    raw.pollCq();
                    if (!c.finishConnect()) {
                        return false;
                    }
                    long n = Pair.read(c, got);
                    if (n < 0) {
                        end[0] = n;
                    }
                    return end[0] < 0;
                } catch (IOException x) {
                    throw new AssertionError(x);
                }
            });
            assertEquals(8, got.position());
            assertEquals(0, p.client.stats().protocolErrors());
        }
    }

    private static ConnectException awaitConnectFailure(Pair p, RawPeer raw, Connection c) {
        ConnectException[] seen = new ConnectException[1];
        p.await("connect failure", () -> {
            try {
                raw.pollCq();
                assertFalse(c.finishConnect());
                return false;
            } catch (ConnectException x) {
                seen[0] = x;
                return true;
            } catch (IOException x) {
                throw new AssertionError(x);
            }
        });
        return seen[0];
    }
}
