package io.rdmanio.core.fabric.loopback;

import io.rdmanio.core.fabric.MemoryRegion;
import java.nio.ByteBuffer;

/**
 * A registered range of a direct buffer, with a synthetic fabric address and keys.
 *
 * <p>Thread-safe: the fields are final except {@link #valid}, and the data is only touched through absolute
 * bulk copies on {@link #memory}, which never move its position.
 */
final class LoopbackMemoryRegion implements MemoryRegion {

    final LoopbackFabric fabric;
    /** The registered bytes; index 0 is the region's first byte. Only absolute operations are used on it. */
    final ByteBuffer memory;
    private final long address;
    private final int lkey;
    private final int rkey;
    private final int access;
    private volatile boolean valid = true;

    LoopbackMemoryRegion(LoopbackFabric fabric, ByteBuffer memory, long address, int lkey, int rkey, int access) {
        this.fabric = fabric;
        this.memory = memory;
        this.address = address;
        this.lkey = lkey;
        this.rkey = rkey;
        this.access = access;
    }

    boolean isValid() {
        return valid;
    }

    /** Whether {@code [offset, offset + length)} lies inside the region (overflow-safe). */
    boolean covers(long offset, int length) {
        return offset >= 0 && length >= 0 && offset <= memory.capacity() - (long) length;
    }

    @Override
    public ByteBuffer buffer() {
        return memory.duplicate().clear();
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public int length() {
        return memory.capacity();
    }

    @Override
    public int lkey() {
        return lkey;
    }

    @Override
    public int rkey() {
        return rkey;
    }

    @Override
    public int access() {
        return access;
    }

    @Override
    public void close() {
        if (valid) {
            valid = false;
            fabric.deregistered(this);
        }
    }

    @Override
    public String toString() {
        return "region@0x" + Long.toHexString(address) + "+" + memory.capacity() + (valid ? "" : " (deregistered)");
    }
}
