package io.rdmanio.core.protocol;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Layout of a frame: the 24-byte header every send starts with, followed by the payload. Only the header and the
 * used payload bytes are sent (send length = {@link #HEADER_LENGTH} + payload length); the receive it lands in is
 * one slot of the receiver's ring.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+-------------------------------+
 *  |     type      |     flags     |           reserved            |  0
 *  +---------------+---------------+-------------------------------+
 *  |                        payload length                         |  4
 *  +---------------------------------------------------------------+
 *  |                    dataCredit (cumulative)                    |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                   controlCredit (cumulative)                  | 16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     payload (length bytes)                  ...  24
 * </pre>
 *
 * <p>All fields are little-endian ({@link #BYTE_ORDER}): the byte order of every host the fabrics run on, so
 * neither side swaps. Integers are unsigned; the credit counters are u64 and start at the slot counts of the
 * handshake, so at one frame per nanosecond they would take centuries to reach 2^63: they are compared as signed
 * longs and never wrap.
 *
 * <p>Stateless and thread-safe; the buffer passed in is read and written with absolute operations only.
 */
public final class FrameDescriptor {

    /** Byte order of every multi-byte field of a frame and of the handshake. */
    public static final ByteOrder BYTE_ORDER = ByteOrder.LITTLE_ENDIAN;

    public static final int TYPE_OFFSET = 0;
    public static final int FLAGS_OFFSET = 1;
    public static final int RESERVED_OFFSET = 2;
    public static final int LENGTH_OFFSET = 4;
    public static final int DATA_CREDIT_OFFSET = 8;
    public static final int CONTROL_CREDIT_OFFSET = 16;
    public static final int HEADER_LENGTH = 24;

    /** Stream bytes; consumes a data credit. */
    public static final int TYPE_DATA = 1;
    /** Credit only (payload length 0); consumes a control credit. */
    public static final int TYPE_CREDIT = 2;
    /** End of this direction's stream (payload length 0); consumes a control credit. */
    public static final int TYPE_FIN = 3;
    /*
     * Type 4 was HELLO in protocol version 1 (the server's handshake as the first frame); since version 2 it
     * travels with the server's accept, and 4 is an unknown type like any other.
     */

    /**
     * Flag of a DATA frame of one byte: the byte was sent as TCP's urgent data ({@code Socket.sendUrgentData}). A
     * receiver whose socket inlines urgent data ({@code SO_OOBINLINE}) reads it in its place in the stream; one that
     * does not drops it, as a TCP socket keeps its urgent byte out of the stream that {@code read} returns.
     */
    public static final int FLAG_URGENT = 0x01;

    /**
     * Flag of a CREDIT frame: the sender reset the connection (an abortive close: unread bytes at close, SO_LINGER
     * 0, bytes for a closed socket), and its disconnect follows. A disconnect alone after this side's FIN would
     * read as an orderly close; with the flag the receiver reports the reset as TCP's socket reports one that
     * comes after the FIN (its writes fail with "Broken pipe", its reads end).
     */
    public static final int FLAG_RESET = 0x02;

    /** Smallest slot: a header plus a useful payload. Slot sizes must also be powers of two. */
    public static final int MIN_SLOT_SIZE = 256;
    /** Largest slot, so that a payload length always fits a positive int. */
    public static final int MAX_SLOT_SIZE = 1 << 30;

    private FrameDescriptor() {
    }

    /**
     * Checks a slot size.
     *
     * @throws IllegalArgumentException naming the rule and the value
     */
    public static int ensureSlotSize(int slotSize) {
        if (slotSize < MIN_SLOT_SIZE || slotSize > MAX_SLOT_SIZE || Integer.bitCount(slotSize) != 1) {
            throw new IllegalArgumentException("slot size must be a power of two between " + MIN_SLOT_SIZE + " and "
                + MAX_SLOT_SIZE + " bytes: " + slotSize);
        }
        return slotSize;
    }

    /** The largest payload of a frame in a slot of {@code slotSize} bytes. */
    public static int payloadCapacity(int slotSize) {
        return slotSize - HEADER_LENGTH;
    }

    /** Whether {@code type} is a control frame (consumes control credit). */
    public static boolean isControl(int type) {
        return type == TYPE_CREDIT || type == TYPE_FIN;
    }

    public static String typeName(int type) {
        switch (type) {
            case TYPE_DATA: return "DATA";
            case TYPE_CREDIT: return "CREDIT";
            case TYPE_FIN: return "FIN";
            default: return "type " + type;
        }
    }

    /** Writes a header at {@code offset}; flags and reserved are written as zero. */
    public static void writeHeader(ByteBuffer buf, int offset, int type, int payloadLength, long dataCredit,
                                   long controlCredit) {
        writeHeader(buf, offset, type, 0, payloadLength, dataCredit, controlCredit);
    }

    /** Writes a header at {@code offset} with {@code flags}; reserved is written as zero. */
    public static void writeHeader(ByteBuffer buf, int offset, int type, int flags, int payloadLength,
                                   long dataCredit, long controlCredit) {
        buf.put(offset + TYPE_OFFSET, (byte) type);
        buf.put(offset + FLAGS_OFFSET, (byte) flags);
        putShort(buf, offset + RESERVED_OFFSET, (short) 0);
        putInt(buf, offset + LENGTH_OFFSET, payloadLength);
        putLong(buf, offset + DATA_CREDIT_OFFSET, dataCredit);
        putLong(buf, offset + CONTROL_CREDIT_OFFSET, controlCredit);
    }

    public static int type(ByteBuffer buf, int offset) {
        return buf.get(offset + TYPE_OFFSET) & 0xff;
    }

    public static int flags(ByteBuffer buf, int offset) {
        return buf.get(offset + FLAGS_OFFSET) & 0xff;
    }

    public static int reserved(ByteBuffer buf, int offset) {
        return getShort(buf, offset + RESERVED_OFFSET) & 0xffff;
    }

    /** The payload length as an unsigned value. */
    public static long payloadLength(ByteBuffer buf, int offset) {
        return getInt(buf, offset + LENGTH_OFFSET) & 0xffffffffL;
    }

    public static long dataCredit(ByteBuffer buf, int offset) {
        return getLong(buf, offset + DATA_CREDIT_OFFSET);
    }

    public static long controlCredit(ByteBuffer buf, int offset) {
        return getLong(buf, offset + CONTROL_CREDIT_OFFSET);
    }

    /**
     * Checks the header of a received frame on its own (credit rules need the connection's state: see
     * {@link CreditWindow#onReceive}). Allocates only when the frame is malformed.
     *
     * @param byteLen  the bytes the receive completion reported
     * @param slotSize the size of the receive slot
     * @return {@code null} if well-formed, else a sentence naming the field and its value
     */
    public static String checkHeader(ByteBuffer buf, int offset, int byteLen, int slotSize) {
        if (byteLen < HEADER_LENGTH) {
            return "truncated frame: " + byteLen + " bytes received, a header needs " + HEADER_LENGTH;
        }
        int type = type(buf, offset);
        if (type < TYPE_DATA || type > TYPE_FIN) {
            return "unknown frame type " + type;
        }
        int flags = flags(buf, offset);
        if (flags != 0 && !(flags == FLAG_URGENT && type == TYPE_DATA) && !(flags == FLAG_RESET && type == TYPE_CREDIT)) {
            return "flags 0x" + Integer.toHexString(flags) + " set in a " + typeName(type)
                + " frame (only URGENT 0x1, on a DATA frame, and RESET 0x2, on a CREDIT frame, are defined)";
        }
        int reserved = reserved(buf, offset);
        if (reserved != 0) {
            return "reserved field 0x" + Integer.toHexString(reserved) + " is not zero in a " + typeName(type)
                + " frame";
        }
        long length = payloadLength(buf, offset);
        if (length > payloadCapacity(slotSize)) {
            return "payload length " + length + " exceeds the slot payload capacity " + payloadCapacity(slotSize);
        }
        if (length != byteLen - HEADER_LENGTH) {
            return "payload length " + length + " does not match the " + byteLen + " bytes received (expected "
                + (HEADER_LENGTH + length) + ")";
        }
        if (flags == FLAG_URGENT && length != 1) {
            return "payload length " + length + " in an URGENT DATA frame (must be 1)";
        }
        if ((type == TYPE_CREDIT || type == TYPE_FIN) && length != 0) {
            return "payload length " + length + " in a " + typeName(type) + " frame (must be 0)";
        }
        return null;
    }

    // Order-independent accessors: the buffer may have been duplicated without its order.

    static void putShort(ByteBuffer buf, int index, short v) {
        buf.putShort(index, buf.order() == BYTE_ORDER ? v : Short.reverseBytes(v));
    }

    static void putInt(ByteBuffer buf, int index, int v) {
        buf.putInt(index, buf.order() == BYTE_ORDER ? v : Integer.reverseBytes(v));
    }

    static void putLong(ByteBuffer buf, int index, long v) {
        buf.putLong(index, buf.order() == BYTE_ORDER ? v : Long.reverseBytes(v));
    }

    static short getShort(ByteBuffer buf, int index) {
        short v = buf.getShort(index);
        return buf.order() == BYTE_ORDER ? v : Short.reverseBytes(v);
    }

    static int getInt(ByteBuffer buf, int index) {
        int v = buf.getInt(index);
        return buf.order() == BYTE_ORDER ? v : Integer.reverseBytes(v);
    }

    static long getLong(ByteBuffer buf, int index) {
        long v = buf.getLong(index);
        return buf.order() == BYTE_ORDER ? v : Long.reverseBytes(v);
    }
}
