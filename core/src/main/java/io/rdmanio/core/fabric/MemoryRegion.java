package io.rdmanio.core.fabric;

import java.nio.ByteBuffer;

/**
 * Memory registered with a fabric. Addresses are the fabric's addresses for the region (for verbs, virtual
 * addresses); {@code address() + offset} names a byte of the region to a peer holding {@link #rkey()}.
 */
public interface MemoryRegion extends AutoCloseable {

    /** The local fabric may write into the region (receives land here). */
    int LOCAL_WRITE = 1;
    /** A peer may RDMA-write into the region; as in verbs, this requires {@link #LOCAL_WRITE} too. */
    int REMOTE_WRITE = 2;
    /** A peer may RDMA-read from the region. */
    int REMOTE_READ = 4;

    /** The registered memory: a duplicate whose position 0 is the region's first byte. */
    ByteBuffer buffer();

    /** The fabric address of the region's first byte. */
    long address();

    int length();

    int lkey();

    int rkey();

    int access();

    /** Deregisters the region; posting a work request that names it afterwards is a fatal error. */
    @Override
    void close();
}
