package io.rdmanio.core.fabric.shm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A connection's UNIX domain socket: it carries the connection-manager exchange and doorbells, and is the
 * connection's liveness channel (the kernel closes it when a process dies, and the survivor reads end-of-file).
 *
 * <pre>
 *   doorbell:  +------+
 *              | 0x00 |                       one byte: "a completion is waiting for you"
 *              +------+
 *   message:   +------+---------------+---------------------+
 *              | type | length (u16)  | body (length bytes) |     big-endian; type is never 0
 *              +------+---------------+---------------------+
 * </pre>
 *
 * <p>Writes come from any thread and are serialized by {@link #writeLock}, so a doorbell never lands inside a
 * message. The socket is non-blocking (the fabric's watcher selects on it); a write that finds the socket buffer
 * full waits for room, at most {@link #WRITE_TIMEOUT_NANOS}. Reads happen only on the watcher thread.
 */
final class ShmLink {

    static final byte DOORBELL = 0;
    static final byte REQUEST = 1;
    static final byte ACCEPT = 2;
    static final byte REJECT = 3;
    static final byte READY = 4;
    static final byte DISCONNECT = 5;
    /** Accepting side, after READY: its side is established; the connecting side reports ESTABLISHED only now. */
    static final byte UP = 6;

    static final int MAX_BODY = 0xffff;
    /** The read buffer's usual size: every setup message fits. */
    private static final int SMALL_BUFFER = 1024;
    static final long WRITE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(1);

    final SocketChannel channel;
    private final ReentrantLock writeLock = new ReentrantLock();
    private final ByteBuffer doorbell = ByteBuffer.allocateDirect(1);

    // ---- watcher thread only
    /**
     * Frames read and not yet dispatched. Small: after setup a connection's socket carries one-byte doorbells and a
     * disconnect message; a larger frame grows it for as long as it is being read (a 64 KiB buffer for every
     * connection's life was a third of what an idle connection cost the heap).
     */
    private ByteBuffer in = ByteBuffer.allocate(SMALL_BUFFER);
    /** Who gets the frames: the listener before a request arrives, then the id. Set on the watcher thread. */
    volatile Receiver owner;
    /** The watcher this socket is registered with, once it is: a close wakes it so the descriptor is released. */
    volatile ShmWatcher watcher;

    ShmLink(SocketChannel channel, Receiver owner) {
        this.channel = channel;
        this.owner = owner;
    }

    /** Rings the peer's doorbell; a full socket buffer already holds a wakeup, so nothing is lost then. */
    void ringDoorbell() {
        writeLock.lock();
        try {
            doorbell.clear();
            channel.write(doorbell);
        } catch (IOException e) {
            // The peer is gone; the watcher reads end-of-file and fails the connection.
        } finally {
            writeLock.unlock();
        }
    }

    /** Sends one message; never called on the data path. */
    void send(byte type, ByteBuffer body) throws IOException {
        if (body.remaining() > MAX_BODY) {
            throw new IllegalArgumentException("message body of " + body.remaining() + " bytes exceeds " + MAX_BODY);
        }
        ByteBuffer frame = ByteBuffer.allocate(3 + body.remaining());
        frame.put(type).putShort((short) body.remaining()).put(body.duplicate()).flip();
        writeLock.lock();
        try {
            long deadline = System.nanoTime() + WRITE_TIMEOUT_NANOS;
            while (frame.hasRemaining()) {
                if (channel.write(frame) == 0) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new IOException("the peer has not read its connection socket for a second");
                    }
                    LockSupport.parkNanos(50_000);
                }
            }
        } finally {
            writeLock.unlock();
        }
    }

    /** Sends a message, ignoring a peer that is already gone (its end-of-file is handled by the watcher). */
    void trySend(byte type, ByteBuffer body) {
        try {
            send(type, body);
        } catch (IOException e) {
            // gone: nothing to tell
        }
    }

    /** Receives frames from the watcher thread. */
    interface Receiver {
        void doorbell();

        void message(ShmLink link, byte type, ByteBuffer body) throws IOException;

        void endOfFile(ShmLink link, String cause);
    }

    /**
     * Reads what is available and dispatches every complete frame to the current {@link #owner}. Watcher thread
     * only.
     *
     * @return false at end-of-file (already reported)
     */
    boolean read() {
        int n;
        try {
            n = channel.read(in);
        } catch (IOException e) {
            owner.endOfFile(this, "the connection socket failed: " + e.getMessage());
            return false;
        }
        in.flip();
        boolean rang = false;
        int needed = 0;
        try {
            while (in.hasRemaining()) {
                byte type = in.get(in.position());
                if (type == DOORBELL) {
                    in.get();
                    rang = true;
                    continue;
                }
                if (in.remaining() < 3) {
                    break;
                }
                int length = Short.toUnsignedInt(in.getShort(in.position() + 1));
                if (in.remaining() < 3 + length) {
                    needed = 3 + length;
                    break;
                }
                ByteBuffer body = in.slice(in.position() + 3, length);
                in.position(in.position() + 3 + length);
                if (rang) {
                    rang = false;
                    owner.doorbell();
                }
                try {
                    owner.message(this, type, body);
                } catch (IOException | RuntimeException e) {
                    owner.endOfFile(this, ShmCmId.BAD_MESSAGE + e);
                    return false;
                }
            }
        } finally {
            in.compact();
            if (needed > in.capacity()) {
                in = ByteBuffer.allocate(needed).put(in.flip());
            } else if (in.position() == 0 && in.capacity() > SMALL_BUFFER) {
                in = ByteBuffer.allocate(SMALL_BUFFER);
            }
        }
        if (rang || n > 0) {
            owner.doorbell();
        }
        if (n < 0) {
            owner.endOfFile(this, "the peer closed its connection socket (it closed the connection or its"
                + " process died)");
            return false;
        }
        return true;
    }

    void close() {
        try {
            channel.close();
        } catch (IOException e) {
            // closing: nothing to recover
        }
        ShmWatcher w = watcher;
        if (w != null && !w.inWatcher()) {
            // The descriptor is released when the watcher's selector deregisters the key (see ShmWatcher.wakeup).
            w.wakeup();
        }
    }

    // ---- body encoding helpers (messages are built only during setup and teardown)

    static void putString(ByteBuffer b, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(bytes.length, 4000);
        b.putShort((short) n).put(bytes, 0, n);
    }

    static String getString(ByteBuffer b) {
        int n = Short.toUnsignedInt(b.getShort());
        byte[] bytes = new byte[n];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static void putBytes(ByteBuffer b, ByteBuffer data) {
        b.put((byte) data.remaining()).put(data.duplicate());
    }

    /** A read-only copy of a length-prefixed byte field. */
    static ByteBuffer getBytes(ByteBuffer b) {
        int n = Byte.toUnsignedInt(b.get());
        ByteBuffer copy = ByteBuffer.allocate(n);
        copy.put(b.slice(b.position(), n)).flip();
        b.position(b.position() + n);
        return copy.asReadOnlyBuffer();
    }
}
