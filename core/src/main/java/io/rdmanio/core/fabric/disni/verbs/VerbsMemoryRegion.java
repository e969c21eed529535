package io.rdmanio.core.fabric.disni.verbs;

import com.ibm.disni.verbs.IbvMr;
import io.rdmanio.core.Logs;
import io.rdmanio.core.fabric.MemoryRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.slf4j.Logger;

/** A registered region. Thread-safe; {@link #close} deregisters once. */
final class VerbsMemoryRegion implements MemoryRegion {

    private static final Logger LOG = Logs.get(VerbsMemoryRegion.class);

    private final VerbsFabric fabric;
    /** Holds the memory: a region must not outlive its buffer. */
    private final ByteBuffer memory;
    private final IbvMr mr;
    private final long address;
    private final int length;
    private final int lkey;
    private final int rkey;
    private final int access;
    private boolean closed;

    VerbsMemoryRegion(VerbsFabric fabric, ByteBuffer memory, IbvMr mr, long address, int access) {
        this.fabric = fabric;
        this.memory = memory;
        this.mr = mr;
        this.address = address;
        this.length = memory.capacity();
        this.lkey = mr.getLkey();
        this.rkey = mr.getRkey();
        this.access = access;
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
        return length;
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
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            mr.deregMr().execute().free();
        } catch (IOException | RuntimeException e) {
            LOG.debug("deregistering {} failed", this, e);
        }
        fabric.closed(this);
    }

    @Override
    public String toString() {
        return "disni region 0x" + Long.toHexString(address) + "+" + length + " lkey 0x" + Integer.toHexString(lkey);
    }
}
