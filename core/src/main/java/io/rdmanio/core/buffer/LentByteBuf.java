package io.rdmanio.core.buffer;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import io.netty.util.ResourceLeakTracker;
import java.nio.ByteBuffer;

/**
 * A received payload lent to the application in place, over its registered receive slot, as a Netty
 * {@link ByteBuf}. Netty's reference counting decides when the slot comes back: the last {@code release()} hands
 * it to its {@link Owner}, which reposts the receive. Netty's leak detector tracks each loan, so a buffer the
 * application forgets to release is reported as any leaked Netty buffer is.
 *
 * <p>One instance per receive slot, created when the slot is set up and reused for every loan of that slot, so
 * lending does not allocate. Loans of one slot never overlap: a slot is reposted only after its loan ended.
 * Thread-safety is Netty's: release from any thread; the owner must accept a return from any thread.
 */
public final class LentByteBuf extends UnpooledDirectByteBuf {

    /** Takes a slot back when its loan ends. Called on the releasing thread. */
    @FunctionalInterface
    public interface Owner {
        void returned(LentByteBuf buf);
    }

    private static final ResourceLeakDetector<ByteBuf> LEAK_DETECTOR =
        ResourceLeakDetectorFactory.instance().newResourceLeakDetector(ByteBuf.class);

    private final Owner owner;
    private final int slot;
    private ResourceLeakTracker<ByteBuf> leak;

    /**
     * @param slot    the owner's name for the slot
     * @param payload the registered bytes a loan may cover (position to limit)
     */
    public LentByteBuf(Owner owner, int slot, ByteBuffer payload) {
        super(UnpooledByteBufAllocator.DEFAULT, payload, payload.remaining());
        this.owner = owner;
        this.slot = slot;
        // Born with a reference count of 1, but not lent yet.
        setRefCnt(0);
    }

    /** The owner's name for the slot. */
    public int slot() {
        return slot;
    }

    /**
     * Starts a loan of {@code length} bytes from {@code offset} of the payload area.
     *
     * @return this buffer, readable from {@code offset} to {@code offset + length}, reference count 1
     */
    public ByteBuf lend(int offset, int length) {
        resetRefCnt();
        setIndex(offset, offset + length);
        leak = LEAK_DETECTOR.track(this);
        return this;
    }

    @Override
    protected void deallocate() {
        ResourceLeakTracker<ByteBuf> l = leak;
        leak = null;
        if (l != null) {
            l.close(this);
        }
        owner.returned(this);
    }

    /** The memory is a registered slot: it cannot grow or move. */
    @Override
    public ByteBuf capacity(int newCapacity) {
        if (newCapacity == capacity()) {
            return this;
        }
        throw new UnsupportedOperationException("a lent receive slot has a fixed capacity of " + capacity());
    }

    @Override
    public String toString() {
        return "LentByteBuf(slot " + slot + ", ridx " + readerIndex() + ", widx " + writerIndex() + ", refCnt "
            + refCnt() + ")";
    }
}
