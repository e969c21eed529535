package io.rdmanio.core.fabric;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * One opened fabric: the factory of every verbs object (a protection domain and a device context in verbs terms).
 *
 * <p>Thread-safe. Objects created by one fabric must not be mixed with another's.
 */
public interface Fabric extends AutoCloseable {

    /** The fabric's configuration name: {@code loopback}, {@code shm} or {@code disni}. */
    String name();

    /**
     * Registers memory once, for the life of the region. Never called on the data path.
     *
     * @param buffer a direct buffer; the region covers its position to its limit
     * @param access a bit set of {@link MemoryRegion#LOCAL_WRITE}, {@link MemoryRegion#REMOTE_WRITE},
     *               {@link MemoryRegion#REMOTE_READ}; the least access the region needs
     */
    MemoryRegion register(ByteBuffer buffer, int access) throws IOException;

    /**
     * Allocates memory of the fabric's choosing and registers it; the engine takes all its buffer memory this way.
     * A fabric whose peers reach registered memory directly (shm: another process maps it) backs it with memory
     * it can share; others allocate a direct buffer and {@link #register} it. Never called on the data path.
     */
    default MemoryRegion allocate(int length, int access) throws IOException {
        return register(ByteBuffer.allocateDirect(length), access);
    }

    /**
     * The engine's slot size (its largest frame) on this fabric when {@code rdmanio.slotSize} is not set, or 0 for
     * the engine's own default. A fabric whose buffer memory is only backed where it is written (shm: pages of a
     * shared file) can prefer large slots: a stream then moves in fewer frames and completions, while a small
     * message still costs only the pages it touches.
     */
    default int preferredSlotSize() {
        return 0;
    }

    /**
     * Bytes the engine allocates at a time for its buffer pool, or 0 for the engine's default (4 MiB). Each
     * allocation is a region: on shm a file descriptor and a mapping in each process that reaches it. A fabric whose
     * memory is backed only where written can take large allocations, so that many connections share one region
     * at no memory cost until their slots are used; a fabric that pins or zeroes what it allocates (verbs
     * registration, direct buffers) should not.
     */
    default int preferredAllocationSize() {
        return 0;
    }

    /**
     * The largest {@code maxInlineData} a queue pair of this fabric can be created with, and so the largest
     * {@link QueuePair#postSendInline} (0: none). The engine sends a whole frame inline, straight from the
     * application's buffer, when a frame fits: a software fabric that copies at post time anyway can offer a
     * slot's worth; a device offers what its work queue entries hold.
     */
    default int maxInlineData() {
        return 0;
    }

    /** Creates a completion queue with room for {@code entries} completions; overflowing it is a fatal error. */
    CompletionQueue createCompletionQueue(int entries) throws IOException;

    /** Creates a channel on which connection-manager events of the ids bound to it are delivered. */
    EventChannel createEventChannel() throws IOException;

    /** Creates a connection-manager id whose events arrive on {@code events}. */
    CmId createId(EventChannel events) throws IOException;

    /** Closes the fabric; objects still open are closed with it. */
    @Override
    void close() throws IOException;
}
