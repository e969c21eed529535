package io.rdmanio.core.resolver;

import static io.rdmanio.core.resolver.ResolverPacketDescriptor.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.resolver.ResolverCodec.BadPacketException;
import io.rdmanio.core.resolver.ResolverCodec.Entry;
import io.rdmanio.core.resolver.ResolverCodec.Packet;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class ResolverCodecTest {

    private static final byte[] KEY = "0123456789abcdef-cluster-key".getBytes(StandardCharsets.UTF_8);
    private static final long NOW = 1_700_000_000_000L;

    private static final InetSocketAddress A = new InetSocketAddress("10.231.0.2", 9000);
    private static final InetSocketAddress B = new InetSocketAddress("fd00::7", 443);

    @Test
    void queryBytesAreAtTheDocumentedOffsets() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(MAX_PACKET);
        int n = new ResolverCodec(null).encodeQuery(b, 0x1122334455667788L, NOW, List.of(A, B), 0, 2);
        assertEquals(HEADER_LENGTH + 2 * QUERY_RECORD_LENGTH, n);
        assertEquals(0x52, b.get(0));
        assertEquals(0x44, b.get(1));
        assertEquals(0x52, b.get(2));
        assertEquals(0x53, b.get(3));
        assertEquals(VERSION, b.get(VERSION_OFFSET));
        assertEquals(TYPE_QUERY, b.get(TYPE_OFFSET));
        assertEquals(0, b.get(FLAGS_OFFSET));
        assertEquals(2, b.get(COUNT_OFFSET));
        assertEquals(0x11, b.get(NONCE_OFFSET));
        assertEquals((byte) 0x88, b.get(NONCE_OFFSET + 7));
        assertEquals(NOW, b.getLong(TIMESTAMP_OFFSET));
        byte[] mapped = new byte[16];
        b.get(HEADER_LENGTH, mapped);
        assertArrayEquals(new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 10, (byte) 231, 0, 2},
            mapped);
        assertEquals(0x23, b.get(HEADER_LENGTH + 16));
        assertEquals(0x28, b.get(HEADER_LENGTH + 17));
        Packet p = new ResolverCodec(null).decode(b, n, NOW);
        assertEquals(TYPE_QUERY, p.type());
        assertEquals(0x1122334455667788L, p.nonce());
        assertEquals(List.of(A, B), p.queried());
    }

    @Test
    void endpointRecordRoundTripsEveryField() throws Exception {
        HostIdentity host = new HostIdentity(UUID.fromString("8d5a2c0e-0f6b-4c1e-9a55-5a1f3d0e9b11"), 42, 4711);
        Endpoints ep = new Endpoints(host, new InetSocketAddress("0.0.0.0", 9000),
            new InetSocketAddress("192.168.77.2", 9000), Endpoints.THIS_PROCESS);
        ByteBuffer b = ByteBuffer.allocate(MAX_PACKET);
        int n = new ResolverCodec(null).encodeEntries(b, TYPE_ANSWER, 7, NOW, List.of(new Entry(A, ep, 0xABCDL)), 0, 1);
        assertEquals(HEADER_LENGTH + ENDPOINT_RECORD_LENGTH, n);
        int at = HEADER_LENGTH;
        assertEquals(Endpoints.FABRIC_SHM | Endpoints.FABRIC_DISNI | Endpoints.FABRIC_LOOPBACK, b.get(at + EP_FABRICS_OFFSET));
        assertEquals(0xABCDL, b.getLong(at + EP_INCARNATION_OFFSET));
        assertEquals(42, b.getLong(at + EP_SHM_DEV_OFFSET));
        assertEquals(4711, b.getLong(at + EP_SHM_INO_OFFSET));
        assertEquals(9000, Short.toUnsignedInt(b.getShort(at + EP_DISNI_PORT_OFFSET)));
        Packet p = new ResolverCodec(null).decode(b, n, NOW);
        Entry e = p.entries().get(0);
        assertEquals(A, e.address());
        assertEquals(ep, e.endpoints());
        assertEquals(0xABCDL, e.incarnation());
    }

    @Test
    void withdrawCarriesNoEndpoints() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(MAX_PACKET);
        int n = new ResolverCodec(null).encodeEntries(b, TYPE_WITHDRAW, 7, NOW, List.of(new Entry(A, null, 5)), 0, 1);
        Entry e = new ResolverCodec(null).decode(b, n, NOW).entries().get(0);
        assertNull(e.endpoints());
        assertEquals(5, e.incarnation());
    }

    @Test
    void signedPacketsVerifyAndTamperingIsForged() throws Exception {
        ResolverCodec codec = new ResolverCodec(KEY);
        ByteBuffer b = ByteBuffer.allocate(MAX_PACKET);
        int n = codec.encodeQuery(b, 9, NOW, List.of(A), 0, 1);
        assertEquals(HEADER_LENGTH + QUERY_RECORD_LENGTH + MAC_LENGTH, n);
        assertEquals(FLAG_SIGNED, b.get(FLAGS_OFFSET));
        assertEquals(List.of(A), codec.decode(b, n, NOW).queried());
        b.put(HEADER_LENGTH + 15, (byte) 3);
        assertEquals("forged", assertThrows(BadPacketException.class, () -> codec.decode(b, n, NOW)).counter);
        ByteBuffer other = ByteBuffer.allocate(MAX_PACKET);
        int m = new ResolverCodec("another key of 16+ bytes".getBytes(StandardCharsets.UTF_8))
            .encodeQuery(other, 9, NOW, List.of(A), 0, 1);
        assertEquals("forged", assertThrows(BadPacketException.class, () -> codec.decode(other, m, NOW)).counter);
    }

    @Test
    void withAKeyUnsignedAndStalePacketsAreDropped() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(MAX_PACKET);
        int n = new ResolverCodec(null).encodeQuery(b, 9, NOW, List.of(A), 0, 1);
        ResolverCodec keyed = new ResolverCodec(KEY);
        assertEquals("unsigned", assertThrows(BadPacketException.class, () -> keyed.decode(b, n, NOW)).counter);
        int s = keyed.encodeQuery(b, 9, NOW, List.of(A), 0, 1);
        BadPacketException stale = assertThrows(BadPacketException.class,
            () -> keyed.decode(b, s, NOW + ResolverCodec.REPLAY_WINDOW_MILLIS + 1));
        assertEquals("stale", stale.counter);
    }

    @Test
    void badFormsAreMalformedOrOversized() throws Exception {
        ResolverCodec codec = new ResolverCodec(null);
        ByteBuffer b = ByteBuffer.allocate(MAX_PACKET + 1);
        int n = codec.encodeQuery(b, 9, NOW, List.of(A, B), 0, 2);
        assertEquals("malformed", assertThrows(BadPacketException.class, () -> codec.decode(b, n - 1, NOW)).counter);
        assertEquals("malformed", assertThrows(BadPacketException.class, () -> codec.decode(b, n + 1, NOW)).counter);
        assertEquals("malformed", assertThrows(BadPacketException.class, () -> codec.decode(b, 10, NOW)).counter);
        assertEquals("oversized",
            assertThrows(BadPacketException.class, () -> codec.decode(b, MAX_PACKET + 1, NOW)).counter);
        b.put(TYPE_OFFSET, (byte) 99);
        BadPacketException type = assertThrows(BadPacketException.class, () -> codec.decode(b, n, NOW));
        assertTrue(type.getMessage().contains("unknown type 99"), type.getMessage());
        b.put(TYPE_OFFSET, (byte) TYPE_QUERY);
        b.putInt(MAGIC_OFFSET, 0);
        assertEquals("malformed", assertThrows(BadPacketException.class, () -> codec.decode(b, n, NOW)).counter);
    }

    @Test
    void packetsAreBoundedAndCountsFitTheirField() {
        assertEquals(74, MAX_QUERY_RECORDS);
        assertEquals(12, MAX_ENDPOINT_RECORDS);
        assertTrue(packetLength(TYPE_QUERY, MAX_QUERY_RECORDS, true) <= MAX_PACKET);
        assertTrue(packetLength(TYPE_ANSWER, MAX_ENDPOINT_RECORDS, true) <= MAX_PACKET);
        List<InetSocketAddress> many = new ArrayList<>();
        for (int i = 0; i < 75; i++) {
            many.add(new InetSocketAddress("10.0.0.1", 1000 + i));
        }
        ByteBuffer b = ByteBuffer.allocate(MAX_PACKET);
        assertThrows(IllegalArgumentException.class, () -> new ResolverCodec(null).encodeQuery(b, 1, NOW, many, 0, 75));
    }
}
