package io.rdmanio.core.fabric.shm;

import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * Layout of a fabric's region directory: the table through which a peer process finds, checks and maps the
 * regions this fabric granted. Written only by the owning fabric; peers map it read-mostly.
 *
 * <pre>{@code
 *   0          4          8                   16         20                                      64
 *   +----------+----------+-------------------+----------+---------------------------------------+
 *   | magic    | version  | nonce (long)      | capacity | (reserved)                            | header
 *   +----------+----------+-------------------+----------+---------------------------------------+
 *   entry[capacity], 64 bytes each:
 *   +0  state (long): generation << 8 | LIVE or FREE, released last by the owner
 *   +8  rkey (int)    +12 access (int)   +16 length (int)   +20 fd (int): the owner's open descriptor of the file
 *   +24 address (long): fabric address of the region's first byte
 *   +32 inode (long): of the region file, checked by the peer after opening it through /proc/PID/fd/FD
 *   +40 .. +64 (reserved)
 * }</pre>
 *
 * <p>An entry is made LIVE by writing its body and then releasing the state; it is retired by releasing FREE
 * before the owner closes the file's descriptor, so a peer that re-reads the state after opening the descriptor
 * never keeps a file the descriptor number was reused for. An rkey names its slot ({@code rkey & 0xffff}) and
 * the slot's generation, so a stale key never matches a reused slot.
 */
final class ShmRegionDirectoryDescriptor {

    static final int MAGIC = 0x53484d44; // "SHMD"
    static final int VERSION = 1;
    static final int NONCE_OFFSET = 8;
    static final int CAPACITY_OFFSET = 16;
    static final int HEADER_LENGTH = 64;
    static final int ENTRY_LENGTH = 64;

    static final int STATE = 0;
    static final int RKEY = 8;
    static final int ACCESS = 12;
    static final int LENGTH = 16;
    static final int FD = 20;
    static final int ADDRESS = 24;
    static final int INODE = 32;

    static final long FREE = 0;
    static final long LIVE = 1;

    /** Slots are named by the low 16 bits of an rkey, so a fabric has at most this many live regions. */
    static final int MAX_CAPACITY = 1 << 16;

    private ShmRegionDirectoryDescriptor() {
    }

    static int fileLength(int capacity) {
        if (capacity < 1 || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("a region directory holds between 1 and " + MAX_CAPACITY
                + " regions (an rkey names its slot in 16 bits): " + capacity);
        }
        return HEADER_LENGTH + capacity * ENTRY_LENGTH;
    }

    static int entry(int slot) {
        return HEADER_LENGTH + slot * ENTRY_LENGTH;
    }

    static void writeHeader(ByteBuffer b, long nonce, int capacity) {
        b.putInt(4, VERSION);
        b.putLong(NONCE_OFFSET, nonce);
        b.putInt(CAPACITY_OFFSET, capacity);
        ShmRingsDescriptor.INT.setRelease(b, 0, MAGIC);
    }

    static String checkHeader(ByteBuffer b, long nonce) {
        if (b.capacity() < HEADER_LENGTH || (int) ShmRingsDescriptor.INT.getAcquire(b, 0) != MAGIC
            || b.getInt(4) != VERSION || b.getLong(NONCE_OFFSET) != nonce
            || b.capacity() < fileLength(b.getInt(CAPACITY_OFFSET))) {
            return "the peer's region directory is not the one its handshake named";
        }
        return null;
    }

    static int capacity(ByteBuffer b) {
        return b.getInt(CAPACITY_OFFSET);
    }

    /** Owner: writes a live entry's body, then releases its state. */
    static void writeAndReleaseLive(ByteBuffer b, int slot, long generation, int rkey, int access, int length,
                                    int fd, long address, long inode) {
        int e = entry(slot);
        b.putInt(e + RKEY, rkey);
        b.putInt(e + ACCESS, access);
        b.putInt(e + LENGTH, length);
        b.putInt(e + FD, fd);
        b.putLong(e + ADDRESS, address);
        b.putLong(e + INODE, inode);
        ShmRingsDescriptor.LONG.setRelease(b, e + STATE, generation << 8 | LIVE);
    }

    /** Owner: retires an entry (before closing the region's descriptor). */
    static void releaseFree(ByteBuffer b, int slot, long generation) {
        ShmRingsDescriptor.LONG.setRelease(b, entry(slot) + STATE, generation << 8 | FREE);
        VarHandle.fullFence();
    }

    /** Peer: the state word (an acquire load); the body may be read after it shows LIVE. */
    static long getStateAcquire(ByteBuffer b, int slot) {
        return (long) ShmRingsDescriptor.LONG.getAcquire(b, entry(slot) + STATE);
    }

    static boolean isLive(long state) {
        return (state & 0xff) == LIVE;
    }
}
