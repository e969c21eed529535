package io.rdmanio.core.fabric.disni.verbs;

import io.rdmanio.core.fabric.CmId;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The in-band setup message that carries connection-manager private data, which DiSNI 2.1 cannot read from
 * rdma_cm events. The active side sends a REQUEST right after rdma_cm connects; the passive side answers with an
 * ACCEPT or REJECT verdict ahead of any other message.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                      magic 0x52444653                          |  0
 *  +---------------+---------------+-------------------------------+
 *  |     kind      |  data length  |           reserved (0)        |  4
 *  +---------------+---------------+-------------------------------+
 *  |              private data (at most 56 bytes) ...               |  8
 *  +---------------------------------------------------------------+
 * </pre>
 * Little-endian. {@link #LENGTH} bytes are always sent (the unused tail is zero).
 */
final class SetupDescriptor {

    static final int MAGIC = 0x52444653;
    static final int MAGIC_OFFSET = 0;
    static final int KIND_OFFSET = 4;
    static final int DATA_LENGTH_OFFSET = 5;
    static final int DATA_OFFSET = 8;
    /** Must hold {@link CmId#MAX_PRIVATE_DATA} bytes of data after the header. */
    static final int LENGTH = DATA_OFFSET + CmId.MAX_PRIVATE_DATA;

    static final byte REQUEST = 1;
    static final byte ACCEPT = 2;
    static final byte REJECT = 3;

    static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    private SetupDescriptor() {
    }

    /** Writes a message at {@code at} of {@code b}. */
    static void write(ByteBuffer b, int at, byte kind, ByteBuffer data) {
        int n = data == null ? 0 : data.remaining();
        for (int i = 0; i < LENGTH; i++) {
            b.put(at + i, (byte) 0);
        }
        b.putInt(at + MAGIC_OFFSET, MAGIC);
        b.put(at + KIND_OFFSET, kind);
        b.put(at + DATA_LENGTH_OFFSET, (byte) n);
        for (int i = 0; i < n; i++) {
            b.put(at + DATA_OFFSET + i, data.get(data.position() + i));
        }
    }

    /** The kind of a received message of {@code length} bytes, or 0 when it is not a valid setup message. */
    static byte kind(ByteBuffer b, int at, int length) {
        if (length != LENGTH || b.getInt(at + MAGIC_OFFSET) != MAGIC) {
            return 0;
        }
        int n = b.get(at + DATA_LENGTH_OFFSET) & 0xff;
        byte kind = b.get(at + KIND_OFFSET);
        return n <= CmId.MAX_PRIVATE_DATA && kind >= REQUEST && kind <= REJECT ? kind : 0;
    }

    /** A read-only copy of a valid message's private data. */
    static ByteBuffer data(ByteBuffer b, int at) {
        int n = b.get(at + DATA_LENGTH_OFFSET) & 0xff;
        ByteBuffer copy = ByteBuffer.allocate(n);
        for (int i = 0; i < n; i++) {
            copy.put(i, b.get(at + DATA_OFFSET + i));
        }
        return copy.asReadOnlyBuffer();
    }
}
