package io.rdmanio.core.protocol;

import static io.rdmanio.core.protocol.FrameDescriptor.getInt;
import static io.rdmanio.core.protocol.FrameDescriptor.getLong;
import static io.rdmanio.core.protocol.FrameDescriptor.getShort;
import static io.rdmanio.core.protocol.FrameDescriptor.putInt;
import static io.rdmanio.core.protocol.FrameDescriptor.putLong;
import static io.rdmanio.core.protocol.FrameDescriptor.putShort;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * Layout of the handshake: a connection's parameters, sent by the client as connect private data, by the server
 * as accept private data, and (with a reason code) as reject private data.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                     magic 0x4E4D4452 "RDMN"                   |  0
 *  +-------------------------------+-------------------------------+
 *  |        protocol version       |          reason code          |  4
 *  +-------------------------------+-------------------------------+
 *  |                      slot size (bytes)                        |  8
 *  +---------------------------------------------------------------+
 *  |                   data slots (initial dataCredit)             | 12
 *  +---------------------------------------------------------------+
 *  |                control slots (initial controlCredit)          | 16
 *  +---------------------------------------------------------------+
 *  |                        reserved (zero)                        | 20
 *  +---------------------------------------------------------------+
 *  |                          incarnation                          | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>Little-endian, as frames. {@link #LENGTH} must fit {@code CmId.MAX_PRIVATE_DATA} (56 bytes). The reason code
 * is zero in a request and in an accept; in a rejection it names the rule broken, and the other fields carry the
 * server's own values so the client can name both.
 *
 * <p>Stateless and thread-safe.
 */
public final class HandshakeDescriptor {

    public static final int MAGIC = 0x4E4D4452;
    /**
     * The protocol version this build speaks. Version 2 carries the server's handshake in its accept; version 1 sent
     * it as a first frame (HELLO), one wake-up later for the client.
     */
    public static final int VERSION = 2;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int REASON_OFFSET = 6;
    public static final int SLOT_SIZE_OFFSET = 8;
    public static final int DATA_SLOTS_OFFSET = 12;
    public static final int CONTROL_SLOTS_OFFSET = 16;
    public static final int RESERVED_OFFSET = 20;
    public static final int INCARNATION_OFFSET = 24;
    public static final int LENGTH = 32;

    /** Connection-manager private data is limited to 56 bytes; the handshake must fit. */
    private static final int MAX_PRIVATE_DATA = 56;

    static {
        if (LENGTH > MAX_PRIVATE_DATA) {
            throw new ExceptionInInitializerError("handshake of " + LENGTH + " bytes exceeds the private data limit of "
                + MAX_PRIVATE_DATA);
        }
    }

    public static final int REASON_NONE = 0;
    public static final int REASON_MALFORMED = 1;
    public static final int REASON_BAD_MAGIC = 2;
    public static final int REASON_VERSION = 3;
    public static final int REASON_SLOT_SIZE = 4;
    public static final int REASON_SLOT_COUNT = 5;
    public static final int REASON_NO_RESOURCES = 6;
    public static final int REASON_LISTENER_CLOSED = 7;
    /**
     * The server reached a limit of its process or machine (descriptors, mappings, shared or registered memory);
     * the rejection carries the limit's name in ASCII after the handshake (see {@link #limitDetail}).
     */
    public static final int REASON_LIMIT = 8;

    /** Fewest control slots: the no-livelock argument of the credit rules needs two (see {@link CreditWindow}). */
    public static final int MIN_CONTROL_SLOTS = 2;
    /** Most slots of either kind a side may announce. */
    public static final int MAX_SLOTS = 1 << 16;

    private HandshakeDescriptor() {
    }

    /** Writes a handshake at {@code offset} in {@code buf}. */
    public static void write(ByteBuffer buf, int offset, int version, int reason, int slotSize, int dataSlots,
                             int controlSlots, long incarnation) {
        putInt(buf, offset + MAGIC_OFFSET, MAGIC);
        putShort(buf, offset + VERSION_OFFSET, (short) version);
        putShort(buf, offset + REASON_OFFSET, (short) reason);
        putInt(buf, offset + SLOT_SIZE_OFFSET, slotSize);
        putInt(buf, offset + DATA_SLOTS_OFFSET, dataSlots);
        putInt(buf, offset + CONTROL_SLOTS_OFFSET, controlSlots);
        putInt(buf, offset + RESERVED_OFFSET, 0);
        putLong(buf, offset + INCARNATION_OFFSET, incarnation);
    }

    /** A new heap buffer holding one handshake, position 0, limit {@link #LENGTH}. Not for the data path. */
    public static ByteBuffer allocate(int version, int reason, int slotSize, int dataSlots, int controlSlots,
                                      long incarnation) {
        ByteBuffer b = ByteBuffer.allocate(LENGTH).order(FrameDescriptor.BYTE_ORDER);
        write(b, 0, version, reason, slotSize, dataSlots, controlSlots, incarnation);
        return b;
    }

    /**
     * A rejection: a handshake with {@code reason}, followed by {@code detail} in ASCII (at most
     * {@code maxDetail} bytes; a connection-manager rejection has room for {@code MAX_PRIVATE_DATA - LENGTH}).
     */
    public static ByteBuffer allocateRejection(int reason, int slotSize, int dataSlots, int controlSlots,
                                               String detail, int maxDetail) {
        byte[] text = detail == null ? new byte[0] : detail.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        int n = Math.max(0, Math.min(text.length, maxDetail));
        ByteBuffer b = ByteBuffer.allocate(LENGTH + n).order(FrameDescriptor.BYTE_ORDER);
        write(b, 0, VERSION, reason, slotSize, dataSlots, controlSlots, 0);
        b.position(LENGTH);
        b.put(text, 0, n);
        return b.flip();
    }

    /** The ASCII detail after a rejection's handshake, or null when there is none. */
    public static String limitDetail(ByteBuffer reject) {
        int n = reject.remaining() - LENGTH;
        if (n <= 0) {
            return null;
        }
        byte[] text = new byte[n];
        reject.get(reject.position() + LENGTH, text);
        StringBuilder sb = new StringBuilder(n);
        for (byte c : text) {
            sb.append(c >= 0x20 && c < 0x7f ? (char) c : '?');
        }
        return sb.toString();
    }

    public static int magic(ByteBuffer buf, int offset) {
        return getInt(buf, offset + MAGIC_OFFSET);
    }

    public static int version(ByteBuffer buf, int offset) {
        return getShort(buf, offset + VERSION_OFFSET) & 0xffff;
    }

    public static int reason(ByteBuffer buf, int offset) {
        return getShort(buf, offset + REASON_OFFSET) & 0xffff;
    }

    public static int slotSize(ByteBuffer buf, int offset) {
        return getInt(buf, offset + SLOT_SIZE_OFFSET);
    }

    public static int dataSlots(ByteBuffer buf, int offset) {
        return getInt(buf, offset + DATA_SLOTS_OFFSET);
    }

    public static int controlSlots(ByteBuffer buf, int offset) {
        return getInt(buf, offset + CONTROL_SLOTS_OFFSET);
    }

    public static int reservedField(ByteBuffer buf, int offset) {
        return getInt(buf, offset + RESERVED_OFFSET);
    }

    public static long incarnation(ByteBuffer buf, int offset) {
        return getLong(buf, offset + INCARNATION_OFFSET);
    }

    /**
     * Checks a peer's handshake ({@code length} bytes at {@code offset}) against this side's slot size.
     *
     * @return {@link #REASON_NONE} or the reason code of the first rule broken
     */
    public static int check(ByteBuffer buf, int offset, int length, int localSlotSize) {
        if (length < LENGTH) {
            return REASON_MALFORMED;
        }
        if (magic(buf, offset) != MAGIC) {
            return REASON_BAD_MAGIC;
        }
        if (version(buf, offset) != VERSION) {
            return REASON_VERSION;
        }
        if (reservedField(buf, offset) != 0) {
            return REASON_MALFORMED;
        }
        if (slotSize(buf, offset) != localSlotSize) {
            return REASON_SLOT_SIZE;
        }
        int data = dataSlots(buf, offset);
        int control = controlSlots(buf, offset);
        if (data < 1 || data > MAX_SLOTS || control < MIN_CONTROL_SLOTS || control > MAX_SLOTS) {
            return REASON_SLOT_COUNT;
        }
        return REASON_NONE;
    }

    /**
     * Describes why a peer's handshake was refused: {@code theirs} is the handshake that broke the rule (the
     * peer's), {@code length} its size; the local values complete the sentence.
     */
    public static String describe(int reason, ByteBuffer theirs, int offset, int length, int localSlotSize) {
        switch (reason) {
            case REASON_MALFORMED:
                return length < LENGTH ? "handshake of " + length + " bytes (expected " + LENGTH + ")"
                    : "malformed handshake (reserved field 0x" + Integer.toHexString(reservedField(theirs, offset))
                      + ")";
            case REASON_BAD_MAGIC:
                return "bad handshake magic 0x" + Integer.toHexString(magic(theirs, offset)) + " (expected 0x"
                    + Integer.toHexString(MAGIC) + ")";
            case REASON_VERSION:
                return "protocol version " + version(theirs, offset) + " not supported (this side speaks " + VERSION
                    + ")";
            case REASON_SLOT_SIZE:
                return "slot size " + slotSize(theirs, offset) + " does not match (this side uses " + localSlotSize
                    + ")";
            case REASON_SLOT_COUNT:
                return "slot counts out of range: " + dataSlots(theirs, offset) + " data slots (1 to " + MAX_SLOTS
                    + "), " + controlSlots(theirs, offset) + " control slots (" + MIN_CONTROL_SLOTS + " to "
                    + MAX_SLOTS + ")";
            default:
                return "reason code " + reason;
        }
    }

    /**
     * The message of the client's {@code ConnectException} for a rejection carrying {@code reject} (a handshake
     * with a reason code and the server's values) in answer to the client's {@code request}.
     */
    public static String describeRejection(InetSocketAddress server, ByteBuffer reject, ByteBuffer request) {
        String prefix = "rdmanio handshake rejected by " + server + ": ";
        if (reject.remaining() < LENGTH || magic(reject, reject.position()) != MAGIC) {
            return prefix + "unrecognized rejection of " + reject.remaining() + " bytes";
        }
        int r = reject.position();
        int q = request.position();
        int reason = reason(reject, r);
        switch (reason) {
            case REASON_MALFORMED:
                return prefix + "the server found the request malformed";
            case REASON_BAD_MAGIC:
                return prefix + "bad magic 0x" + Integer.toHexString(magic(request, q)) + " (server expects 0x"
                    + Integer.toHexString(magic(reject, r)) + ")";
            case REASON_VERSION:
                return prefix + "protocol version " + version(request, q) + " not supported (server speaks "
                    + version(reject, r) + ")";
            case REASON_SLOT_SIZE:
                return prefix + "slot size " + slotSize(request, q) + " not accepted (server uses "
                    + slotSize(reject, r) + ")";
            case REASON_SLOT_COUNT:
                return prefix + "slot counts " + dataSlots(request, q) + " data / " + controlSlots(request, q)
                    + " control out of range (at least 1 / " + MIN_CONTROL_SLOTS + ", at most " + MAX_SLOTS + ")";
            case REASON_NO_RESOURCES: {
                String detail = limitDetail(reject);
                return prefix + "the server has no room for another connection (" + (detail != null ? detail
                    : "its accept queue is full, or memory for the connection's rings ran out") + ")";
            }
            case REASON_LIMIT:
                return prefix + "the server reached a limit: " + limitDetail(reject) + " (its log names it in full)";
            case REASON_LISTENER_CLOSED:
                return prefix + "the listener closed";
            default:
                return prefix + "reason code " + reason;
        }
    }
}
