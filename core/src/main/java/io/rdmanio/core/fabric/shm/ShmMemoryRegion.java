package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.fabric.MemoryRegion;
import java.nio.ByteBuffer;

/**
 * A registered region. A shared one ({@link io.rdmanio.core.fabric.Fabric#allocate}) is an unlinked file with a slot in the fabric's
 * region directory, so peer processes map it; a local one ({@link io.rdmanio.core.fabric.Fabric#register} of any direct buffer) serves
 * only as the source of sends.
 *
 * <p>Thread-safe: fields are final except {@link #valid}; data is touched only through absolute bulk copies.
 */
final class ShmMemoryRegion implements MemoryRegion {

    final ShmFabric fabric;
    /** The registered bytes; index 0 is the region's first byte. Only absolute operations are used on it. */
    final ByteBuffer memory;
    /** The region's file, or {@code null} for a local region. */
    final ShmFile file;
    /** The directory slot, or -1 for a local region. */
    final int slot;
    final long generation;
    private final long address;
    private final int lkey;
    private final int rkey;
    private final int access;
    private volatile boolean valid = true;

    ShmMemoryRegion(ShmFabric fabric, ByteBuffer memory, ShmFile file, int slot, long generation, long address,
                    int lkey, int rkey, int access) {
        this.fabric = fabric;
        this.memory = memory;
        this.file = file;
        this.slot = slot;
        this.generation = generation;
        this.address = address;
        this.lkey = lkey;
        this.rkey = rkey;
        this.access = access;
    }

    boolean isValid() {
        return valid;
    }

    boolean isShared() {
        return file != null;
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

    /** Deregisters: the directory entry is retired first, then the file's descriptor is closed. */
    @Override
    public void close() {
        synchronized (this) {
            if (!valid) {
                return;
            }
            valid = false;
        }
        fabric.deregistered(this);
    }

    @Override
    public String toString() {
        return (file != null ? "region@0x" : "local region@0x") + Long.toHexString(address) + "+" + memory.capacity()
            + (valid ? "" : " (deregistered)");
    }
}
