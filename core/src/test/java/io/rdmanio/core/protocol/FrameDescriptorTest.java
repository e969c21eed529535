package io.rdmanio.core.protocol;

import static io.rdmanio.core.protocol.FrameDescriptor.*;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

class FrameDescriptorTest {

    private static final int SLOT = 1024;

    private static ByteBuffer frame(int type, int length, long data, long control) {
        ByteBuffer b = ByteBuffer.allocate(SLOT).order(ByteOrder.LITTLE_ENDIAN);
        writeHeader(b, 8, type, length, data, control);
        return b;
    }

    @Test
    void headerRoundTripsInEitherBufferOrder() {
        for (ByteOrder order : new ByteOrder[] {ByteOrder.LITTLE_ENDIAN, ByteOrder.BIG_ENDIAN}) {
            ByteBuffer b = ByteBuffer.allocate(64).order(order);
            writeHeader(b, 4, TYPE_DATA, 1000, 0x0102030405060708L, Long.MAX_VALUE);
            assertEquals(TYPE_DATA, type(b, 4));
            assertEquals(0, flags(b, 4));
            assertEquals(0, reserved(b, 4));
            assertEquals(1000, payloadLength(b, 4));
            assertEquals(0x0102030405060708L, dataCredit(b, 4));
            assertEquals(Long.MAX_VALUE, controlCredit(b, 4));
            // Little-endian on the wire whatever the buffer's order.
            assertEquals((byte) 0xe8, b.get(4 + LENGTH_OFFSET));
            assertEquals((byte) 0x08, b.get(4 + DATA_CREDIT_OFFSET));
            assertNull(checkHeader(b, 4, HEADER_LENGTH + 1000, SLOT * 2));
        }
    }

    @Test
    void wellFormedFramesPass() {
        assertNull(checkHeader(frame(TYPE_DATA, 0, 1, 2), 8, HEADER_LENGTH, SLOT));
        assertNull(checkHeader(frame(TYPE_DATA, SLOT - HEADER_LENGTH, 1, 2), 8, SLOT, SLOT));
        assertNull(checkHeader(frame(TYPE_CREDIT, 0, 1, 2), 8, HEADER_LENGTH, SLOT));
        assertNull(checkHeader(frame(TYPE_FIN, 0, 1, 2), 8, HEADER_LENGTH, SLOT));
    }

    @Test
    void eachMalformedFieldIsNamed() {
        assertEquals("truncated frame: 23 bytes received, a header needs 24",
            checkHeader(frame(TYPE_DATA, 0, 1, 2), 8, 23, SLOT));
        ByteBuffer b = frame(TYPE_DATA, 0, 1, 2);
        b.put(8, (byte) 9);
        assertEquals("unknown frame type 9", checkHeader(b, 8, HEADER_LENGTH, SLOT));
        b.put(8, (byte) 0);
        assertEquals("unknown frame type 0", checkHeader(b, 8, HEADER_LENGTH, SLOT));
        b = frame(TYPE_DATA, 0, 1, 2);
        b.put(8 + FLAGS_OFFSET, (byte) 0x80);
        assertEquals("flags 0x80 set in a DATA frame (only URGENT 0x1, on a DATA frame, and RESET 0x2, on a CREDIT "
            + "frame, are defined)",
            checkHeader(b, 8, HEADER_LENGTH, SLOT));
        b = frame(TYPE_FIN, 0, 1, 2);
        b.put(8 + FLAGS_OFFSET, (byte) FrameDescriptor.FLAG_URGENT);
        assertEquals("flags 0x1 set in a FIN frame (only URGENT 0x1, on a DATA frame, and RESET 0x2, on a CREDIT "
            + "frame, are defined)", checkHeader(b, 8, HEADER_LENGTH, SLOT));
        b = frame(TYPE_DATA, 1, 1, 2);
        b.put(8 + FLAGS_OFFSET, (byte) FrameDescriptor.FLAG_RESET);
        assertEquals("flags 0x2 set in a DATA frame (only URGENT 0x1, on a DATA frame, and RESET 0x2, on a CREDIT "
            + "frame, are defined)", checkHeader(b, 8, HEADER_LENGTH + 1, SLOT));
        b = frame(TYPE_CREDIT, 0, 1, 2);
        b.put(8 + FLAGS_OFFSET, (byte) FrameDescriptor.FLAG_RESET);
        assertEquals(null, checkHeader(b, 8, HEADER_LENGTH, SLOT), "a RESET credit frame is well-formed");
        b = frame(TYPE_DATA, 2, 1, 2);
        b.put(8 + FLAGS_OFFSET, (byte) FrameDescriptor.FLAG_URGENT);
        assertEquals("payload length 2 in an URGENT DATA frame (must be 1)", checkHeader(b, 8, HEADER_LENGTH + 2, SLOT));
        b = frame(TYPE_DATA, 1, 1, 2);
        b.put(8 + FLAGS_OFFSET, (byte) FrameDescriptor.FLAG_URGENT);
        assertEquals(null, checkHeader(b, 8, HEADER_LENGTH + 1, SLOT), "one urgent byte is well-formed");
        b = frame(TYPE_CREDIT, 0, 1, 2);
        b.put(8 + RESERVED_OFFSET + 1, (byte) 1);
        assertEquals("reserved field 0x100 is not zero in a CREDIT frame", checkHeader(b, 8, HEADER_LENGTH, SLOT));
        assertEquals("payload length 1001 exceeds the slot payload capacity 1000",
            checkHeader(frame(TYPE_DATA, 1001, 1, 2), 8, HEADER_LENGTH + 1001, SLOT));
        b = frame(TYPE_DATA, 0, 1, 2);
        b.putInt(8 + LENGTH_OFFSET, -1);
        assertEquals("payload length 4294967295 exceeds the slot payload capacity 1000",
            checkHeader(b, 8, SLOT, SLOT));
        assertEquals("payload length 10 does not match the 44 bytes received (expected 34)",
            checkHeader(frame(TYPE_DATA, 10, 1, 2), 8, 44, SLOT));
        assertEquals("payload length 4 in a CREDIT frame (must be 0)",
            checkHeader(frame(TYPE_CREDIT, 4, 1, 2), 8, 28, SLOT));
        assertEquals("payload length 4 in a FIN frame (must be 0)",
            checkHeader(frame(TYPE_FIN, 4, 1, 2), 8, 28, SLOT));
        // Version 1's HELLO: the server's handshake now travels with its accept.
        assertEquals("unknown frame type 4", checkHeader(frame(4, HandshakeDescriptor.LENGTH, 1, 2), 8,
            HEADER_LENGTH + HandshakeDescriptor.LENGTH, SLOT));
    }

    @Test
    void slotSizeRuleIsNamed() {
        assertEquals(256, ensureSlotSize(256));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ensureSlotSize(1000));
        assertEquals("slot size must be a power of two between 256 and 1073741824 bytes: 1000", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ensureSlotSize(128));
    }
}
