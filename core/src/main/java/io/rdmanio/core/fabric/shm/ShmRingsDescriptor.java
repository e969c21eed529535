package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.fabric.Completions;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Layout of a connection's rings (a cell of a {@link ShmRingArena}): for each side, the receive queue it posts into and the completion queue its
 * peer's sender fills. The accepting side is side 0, the connecting side is side 1. Every queue is a
 * single-producer single-consumer ring, so no lock crosses the process boundary.
 *
 * <pre>
 *   0                   8                  16                  24          32          40          64
 *   +-------------------+------------------+-------------------+-----------+-----------+-----------+
 *   | magic    | version | nonce (long)     | capacity[0]| cap[1]| (reserved)                       | header
 *   +-------------------+------------------+-------------------+-----------+-----------+-----------+
 *   | side 0 receive queue | side 0 completion queue | side 1 receive queue | side 1 completion queue |
 *
 *   receive queue of side s (producer: side s posting receives; consumer: the peer's sender)
 *   +0    taken (long): receives the peer has taken; bit 63 (CLOSED) set by side s when its queue pair fails
 *   +8    closed in order (int): 1 when side s closed the queue by an orderly disconnect, written before CLOSED
 *   +64   standing (long), written by side s alone, on a line of its own (the producer's entries stay off the
 *         consumer's line): bit 63 set with, in bits 0-62, the payload bytes side s's application has taken, while
 *         nothing it accepted for sending is unsent; 0 otherwise. Read by the peer only once side s's process
 *         ended without a DISCONNECT, to answer end of stream (nothing left unread or unsent) rather than a reset
 *   +128  entry[capacity], 32 bytes each:
 *         +0 sequence + 1 (long, released last)  +8 wrId (long)
 *         +16 region rkey (int)  +20 offset (int)  +24 length (int)  +28 (pad)
 *
 *   completion queue of side s (producer: the peer's sender; consumer: side s polling)
 *   +0    hinted (int): 1 once the producer marked this queue pair in side s's ready map; side s clears it
 *         before it drains the ring, so a producer marks again only after a drain
 *   +8    ready map rkey (int), +12 ready map index (int): side s's completion queue, written by side s before
 *         it tells the peer the rings are ready (ACCEPT, READY); see ShmReadyMapDescriptor
 *   +64   entry[capacity], 32 bytes each:
 *         +0 sequence + 1 (long; with bit 62 IN_PROGRESS while the body is written, released last)
 *         +8 status (int)  +12 opcode (int)  +16 byteLen (int)  +20 (pad)
 * </pre>
 *
 * <p>Completion {@code n} of side s answers receive {@code n} of side s: receives are taken in order by one
 * sender, so entry {@code n % capacity} of both queues belongs to the same request. Sequences are stored plus one
 * so that a zero-filled file holds no entry.
 *
 * <p>Ordering: a record is published by {@code begin*} (marking it in progress), writing the body, then
 * {@code release*} (a release store of its sequence); a reader {@code tryAcquire*}s it (an acquire load) before
 * reading the body. Hinting uses full fences on both sides (a Dekker pair: the consumer clears {@code hinted}
 * then re-reads the queue; the producer releases the record then reads {@code hinted}), so a completion is either
 * seen by the drain or marked in the ready map again.
 */
final class ShmRingsDescriptor {

    static final int MAGIC = 0x53484d52; // "SHMR"
    static final int VERSION = 2;

    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = 4;
    static final int NONCE_OFFSET = 8;
    static final int CAPACITY_OFFSET = 16;
    static final int HEADER_LENGTH = 64;

    static final int RECV_TAKEN_OFFSET = 0;
    static final int RECV_CLOSED_IN_ORDER_OFFSET = 8;
    static final int RECV_STANDING_OFFSET = 64;
    static final int RECV_ENTRIES_OFFSET = 128;
    static final int CQ_HINTED_OFFSET = 0;
    static final int CQ_READY_RKEY_OFFSET = 8;
    static final int CQ_READY_INDEX_OFFSET = 12;
    static final int CQ_ENTRIES_OFFSET = 64;
    static final int ENTRY_LENGTH = 32;

    static final int RECV_SEQ = 0;
    static final int RECV_WR_ID = 8;
    static final int RECV_RKEY = 16;
    static final int RECV_OFFSET = 20;
    static final int RECV_LENGTH = 24;

    static final int CQE_SEQ = 0;
    static final int CQE_STATUS = 8;
    static final int CQE_OPCODE = 12;
    static final int CQE_BYTE_LEN = 16;

    static final long CLOSED = 1L << 63;
    static final long STANDING_PUBLISHED = 1L << 63;
    static final long IN_PROGRESS = 1L << 62;

    /** A ring holds at most this many entries (a power of two): a queue pair's maxRecvWr is bounded by it. */
    static final int MAX_CAPACITY = 1 << 16;

    static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

    private ShmRingsDescriptor() {
    }

    /** The ring capacity for a queue pair posting at most {@code maxRecvWr} receives. */
    static int capacityFor(int maxRecvWr) {
        if (maxRecvWr < 1 || maxRecvWr > MAX_CAPACITY) {
            throw new IllegalArgumentException("a ring holds between 1 and " + MAX_CAPACITY
                + " receives (maxRecvWr): " + maxRecvWr);
        }
        int capacity = 1;
        while (capacity < maxRecvWr) {
            capacity <<= 1;
        }
        return capacity;
    }

    static int recvQueueLength(int capacity) {
        return RECV_ENTRIES_OFFSET + capacity * ENTRY_LENGTH;
    }

    static int completionQueueLength(int capacity) {
        return CQ_ENTRIES_OFFSET + capacity * ENTRY_LENGTH;
    }

    /** Offset of side {@code side}'s receive queue. */
    static int recvQueueOffset(int side, int capacity0, int capacity1) {
        int offset = HEADER_LENGTH;
        if (side == 1) {
            offset += recvQueueLength(capacity0) + completionQueueLength(capacity0);
        }
        return offset;
    }

    static int completionQueueOffset(int side, int capacity0, int capacity1) {
        return recvQueueOffset(side, capacity0, capacity1) + recvQueueLength(side == 0 ? capacity0 : capacity1);
    }

    /** The file length, rounded to a page. */
    static int fileLength(int capacity0, int capacity1) {
        long n = HEADER_LENGTH + (long) recvQueueLength(capacity0) + completionQueueLength(capacity0)
            + recvQueueLength(capacity1) + completionQueueLength(capacity1);
        return (int) ((n + 4095) & ~4095L);
    }

    static void writeHeader(ByteBuffer b, long nonce, int capacity0, int capacity1) {
        b.putInt(VERSION_OFFSET, VERSION);
        b.putLong(NONCE_OFFSET, nonce);
        b.putInt(CAPACITY_OFFSET, capacity0);
        b.putInt(CAPACITY_OFFSET + 4, capacity1);
        INT.setRelease(b, MAGIC_OFFSET, MAGIC);
    }

    /** Null when {@code b} holds the rings described by the handshake, else why not. */
    static String checkHeader(ByteBuffer b, long nonce, int capacity0, int capacity1) {
        if (b.capacity() < fileLength(capacity0, capacity1)) {
            return "rings of " + b.capacity() + " bytes, expected " + fileLength(capacity0, capacity1);
        }
        if ((int) INT.getAcquire(b, MAGIC_OFFSET) != MAGIC || b.getInt(VERSION_OFFSET) != VERSION) {
            return "rings have magic 0x" + Integer.toHexString(b.getInt(MAGIC_OFFSET)) + " version "
                + b.getInt(VERSION_OFFSET) + ", expected 0x" + Integer.toHexString(MAGIC) + " version " + VERSION;
        }
        if (b.getLong(NONCE_OFFSET) != nonce || b.getInt(CAPACITY_OFFSET) != capacity0
            || b.getInt(CAPACITY_OFFSET + 4) != capacity1) {
            return "rings are not the ones the handshake named (nonce or capacities differ)";
        }
        return null;
    }

    // ---- receive queue: the owner publishes, the peer's sender takes

    static int recvEntry(int queue, int capacity, long seq) {
        return queue + RECV_ENTRIES_OFFSET + (int) (seq & (capacity - 1)) * ENTRY_LENGTH;
    }

    /** Owner: writes receive {@code seq}'s body, then releases its sequence. */
    static void writeAndReleaseReceive(ByteBuffer b, int queue, int capacity, long seq, long wrId, int rkey,
                                       int offset, int length) {
        int e = recvEntry(queue, capacity, seq);
        b.putLong(e + RECV_WR_ID, wrId);
        b.putInt(e + RECV_RKEY, rkey);
        b.putInt(e + RECV_OFFSET, offset);
        b.putInt(e + RECV_LENGTH, length);
        LONG.setRelease(b, e + RECV_SEQ, seq + 1);
    }

    /** Sender: whether receive {@code seq} is published (an acquire load; its body may be read after true). */
    static boolean tryAcquireReceive(ByteBuffer b, int queue, int capacity, long seq) {
        return (long) LONG.getAcquire(b, recvEntry(queue, capacity, seq) + RECV_SEQ) == seq + 1;
    }

    /** Sender: the sequence (plus one) of the receive entry {@code seq} maps to (an acquire load). */
    static long getReceiveSequenceAcquire(ByteBuffer b, int queue, int capacity, long seq) {
        return (long) LONG.getAcquire(b, recvEntry(queue, capacity, seq) + RECV_SEQ);
    }

    /**
     * Whether {@code found}, read from the entry of {@code seq}, is what that entry holds before {@code seq} is
     * published there: zero on the first lap (the file starts zero-filled), else the sequence of the lap before.
     */
    static boolean isEarlierLap(long found, long seq, int capacity) {
        return seq < capacity ? found == 0 : found == seq + 1 - capacity;
    }

    static String earlierLap(long seq, int capacity) {
        return seq < capacity ? "0 (never used)" : (seq + 1 - capacity) + " (the lap before)";
    }

    /**
     * Owner: {@code null} when a released completion's body is one a sender writes for a receive of
     * {@code recvLength} bytes, else which field is wrong and its value.
     */
    static String checkCompletion(int status, int opcode, int byteLen, int recvLength) {
        if (opcode != Completions.OP_RECV) {
            return "field opcode is " + opcode + ", not a receive's";
        }
        if (status == Completions.SUCCESS) {
            if (byteLen < 0 || byteLen > recvLength) {
                return "field byteLen is " + byteLen + ", outside the " + recvLength + "-byte receive posted";
            }
        } else if (status == Completions.LOC_LEN_ERR || status == Completions.LOC_PROT_ERR) {
            if (byteLen != 0) {
                return "field byteLen is " + byteLen + " in a failed receive";
            }
        } else {
            return "field status is " + status + ", not one a sender writes";
        }
        return null;
    }

    /**
     * Owner, polling the completion of receive {@code seq}: {@code null} when its entry still describes the receive
     * this side posted (the sender copied where the entry said), else which field differs.
     */
    static String checkReceive(ByteBuffer b, int queue, int capacity, long seq, int rkey, int offset, int length) {
        int e = recvEntry(queue, capacity, seq);
        int foundRkey = b.getInt(e + RECV_RKEY);
        int foundOffset = b.getInt(e + RECV_OFFSET);
        int foundLength = b.getInt(e + RECV_LENGTH);
        if (foundRkey == rkey && foundOffset == offset && foundLength == length) {
            return null;
        }
        return "this side's receive queue entry " + (seq & (capacity - 1)) + " reads rkey 0x"
            + Integer.toHexString(foundRkey) + " offset " + foundOffset + " length " + foundLength
            + ", but was posted as rkey 0x" + Integer.toHexString(rkey) + " offset " + offset + " length " + length;
    }

    /** Sender: the receives taken so far, with {@link #CLOSED} if the owner closed the queue. */
    static long getTakenAcquire(ByteBuffer b, int queue) {
        return (long) LONG.getAcquire(b, queue + RECV_TAKEN_OFFSET);
    }

    /** Sender: takes receive {@code seq}; false when the owner closed the queue meanwhile. */
    static boolean compareAndSetTaken(ByteBuffer b, int queue, long seq) {
        return LONG.compareAndSet(b, queue + RECV_TAKEN_OFFSET, seq, seq + 1);
    }

    /** Owner: closes the queue to its peer's sender; returns how many receives the peer had taken. */
    static long getAndCloseTaken(ByteBuffer b, int queue) {
        return ((long) LONG.getAndBitwiseOr(b, queue + RECV_TAKEN_OFFSET, CLOSED)) & ~CLOSED;
    }

    /**
     * Owner: marks the queue as closed by an orderly disconnect, then closes it; returns how many receives the peer
     * had taken. The mark is written before {@link #CLOSED} (the closing read-modify-write is a full fence), so a
     * sender that sees {@code CLOSED} also sees the mark.
     */
    static long markInOrderThenCloseTaken(ByteBuffer b, int queue) {
        INT.setRelease(b, queue + RECV_CLOSED_IN_ORDER_OFFSET, 1);
        return getAndCloseTaken(b, queue);
    }

    /** Sender, after it saw {@link #CLOSED}: whether the owner closed the queue by an orderly disconnect. */
    static boolean isClosedInOrder(ByteBuffer b, int queue) {
        return (int) INT.getAcquire(b, queue + RECV_CLOSED_IN_ORDER_OFFSET) == 1;
    }

    /** The raw closed-in-order field of a receive queue (0 or 1 in a sound ring), for the periodic check. */
    static int getClosedInOrder(ByteBuffer b, int queue) {
        return (int) INT.getAcquire(b, queue + RECV_CLOSED_IN_ORDER_OFFSET);
    }

    /** Owner: its standing ({@code consumed >= 0}), or none ({@code -1}); see the layout. */
    static void setStanding(ByteBuffer b, int queue, long consumed) {
        LONG.setRelease(b, queue + RECV_STANDING_OFFSET, consumed < 0 ? 0L : consumed | STANDING_PUBLISHED);
    }

    /** The peer's standing as its owner last set it: the bytes it had consumed, or -1 when it set none. */
    static long getStanding(ByteBuffer b, int queue) {
        long v = (long) LONG.getAcquire(b, queue + RECV_STANDING_OFFSET);
        return (v & STANDING_PUBLISHED) == 0 ? -1 : v & ~STANDING_PUBLISHED;
    }

    // ---- completion queue: the peer's sender publishes, the owner polls

    static int completionEntry(int queue, int capacity, long seq) {
        return queue + CQ_ENTRIES_OFFSET + (int) (seq & (capacity - 1)) * ENTRY_LENGTH;
    }

    /** Sender: marks completion {@code seq} in progress before its payload and body are written. */
    static void beginCompletion(ByteBuffer b, int queue, int capacity, long seq) {
        LONG.setRelease(b, completionEntry(queue, capacity, seq) + CQE_SEQ, (seq + 1) | IN_PROGRESS);
    }

    /** Sender: writes the body of completion {@code seq} (a receive's), then releases it to the owner. */
    static void writeAndReleaseCompletion(ByteBuffer b, int queue, int capacity, long seq, int status, int byteLen) {
        int e = completionEntry(queue, capacity, seq);
        b.putInt(e + CQE_STATUS, status);
        b.putInt(e + CQE_OPCODE, Completions.OP_RECV);
        b.putInt(e + CQE_BYTE_LEN, byteLen);
        LONG.setRelease(b, e + CQE_SEQ, seq + 1);
    }

    /** Owner: whether completion {@code seq} is released (an acquire load; its body may be read after true). */
    static boolean tryAcquireCompletion(ByteBuffer b, int queue, int capacity, long seq) {
        return (long) LONG.getAcquire(b, completionEntry(queue, capacity, seq) + CQE_SEQ) == seq + 1;
    }

    /** Owner: the sequence word of the completion entry {@code seq} maps to (an acquire load). */
    static long getCompletionSequenceAcquire(ByteBuffer b, int queue, int capacity, long seq) {
        return (long) LONG.getAcquire(b, completionEntry(queue, capacity, seq) + CQE_SEQ);
    }

    /** The hinted flag of a completion queue: 0 or 1 in a ring that makes sense. */
    static int getHinted(ByteBuffer b, int queue) {
        return (int) INT.getVolatile(b, queue + CQ_HINTED_OFFSET);
    }

    /** Owner: names its completion queue's ready map and its index there, before the peer may send. */
    static void writeReadyMap(ByteBuffer b, int queue, int rkey, int index) {
        b.putInt(queue + CQ_READY_RKEY_OFFSET, rkey);
        b.putInt(queue + CQ_READY_INDEX_OFFSET, index);
    }

    static int readyMapRkey(ByteBuffer b, int queue) {
        return b.getInt(queue + CQ_READY_RKEY_OFFSET);
    }

    static int readyMapIndex(ByteBuffer b, int queue) {
        return b.getInt(queue + CQ_READY_INDEX_OFFSET);
    }

    /**
     * Owner, before draining: a completion released from now on marks the ready map again. (Already clear: no
     * fence needed, a producer that releases now reads it clear.)
     */
    static void clearHintedThenFence(ByteBuffer b, int queue) {
        if ((int) INT.getVolatile(b, queue + CQ_HINTED_OFFSET) != 0) {
            INT.setVolatile(b, queue + CQ_HINTED_OFFSET, 0);
            VarHandle.fullFence();
        }
    }

    /**
     * Producer, after releasing a completion: whether the owner must be told through its ready map (it has
     * drained since the last hint), setting the flag if so.
     */
    static boolean fenceThenTryHint(ByteBuffer b, int queue) {
        VarHandle.fullFence();
        return (int) INT.getVolatile(b, queue + CQ_HINTED_OFFSET) == 0
            && INT.compareAndSet(b, queue + CQ_HINTED_OFFSET, 0, 1);
    }
}
