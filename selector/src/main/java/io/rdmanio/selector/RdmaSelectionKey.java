package io.rdmanio.selector;

import io.rdmanio.core.engine.ReadinessListener;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.spi.AbstractSelectionKey;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A registration with an {@link RdmaSelector}. It is bound, by the selector's thread, either to a key on the
 * selector's inner JDK selector (for a JDK channel, or a channel routed to one) or to a fabric endpoint's
 * readiness; until its channel is routed it is bound to nothing and never ready.
 *
 * <p>Thread-safe as java.nio specifies: {@link #interestOps(int)} from any thread takes effect by the next
 * select. Fields under "selector thread" are touched only while the selector's lock is held.
 */
final class RdmaSelectionKey extends AbstractSelectionKey implements ReadinessListener {

    static final int BOUND_NONE = 0;
    static final int BOUND_INNER = 1;
    static final int BOUND_FABRIC = 2;
    /** Both an inner key and a fabric listener (a server routed to both). */
    static final int BOUND_BOTH = 3;

    private final RdmaSelector selector;
    private final SelectableChannel channel;
    /** Made by {@link RdmaSelector#registerInternal}: not in the channel's own key list. Set before publication. */
    boolean internal;

    private volatile int interestOps;
    private volatile int readyOps;
    /** Set once the key is bound to the inner selector; interest changes then go straight to it. */
    private volatile SelectionKey innerKey;
    /** Bound to a fabric endpoint as well as to an inner key: interest changes must also requeue the key. */
    private volatile boolean fabricToo;

    // -- the selector's pending stack (lock-free, intrusive so that queueing never allocates)
    final AtomicBoolean queued = new AtomicBoolean();
    RdmaSelectionKey nextQueued;

    // -- selector thread
    int bound = BOUND_NONE;
    /** In the selector's candidate list of fabric keys that may be ready. */
    boolean candidate;
    /** In the selector's list of keys reported OP_CONNECT (see {@code RdmaSelector.settleConnected}). */
    boolean connectReported;

    // -- the selector's selected-key set (its guard)
    /** This key's index in the selected-key set, or -1 when not selected. */
    int selectedIndex = -1;
    /** The select pass that last handed this key to a select action (so a key bound twice is handed once). */
    long actionPass;

    RdmaSelectionKey(RdmaSelector selector, SelectableChannel channel, int ops, Object attachment) {
        this.selector = selector;
        this.channel = channel;
        this.interestOps = ops;
        attach(attachment);
    }

    @Override
    public SelectableChannel channel() {
        return channel;
    }

    @Override
    public Selector selector() {
        return selector;
    }

    RdmaSelector rdmaSelector() {
        return selector;
    }

    @Override
    public int interestOps() {
        ensureValid();
        return interestOps;
    }

    /** The interest set without the validity check, for the selector. */
    int interestOpsUnchecked() {
        return interestOps;
    }

    @Override
    public SelectionKey interestOps(int ops) {
        ensureValid();
        if ((ops & ~channel.validOps()) != 0) {
            // As the JDK's key: no message.
            throw new IllegalArgumentException();
        }
        interestOps = ops;
        SelectionKey ik = innerKey;
        if (ik != null) {
            copyInterestTo(ik);
        }
        if (ik == null || fabricToo) {
            selector.enqueue(this);
        }
        return this;
    }

    @Override
    public int readyOps() {
        ensureValid();
        return readyOps;
    }

    int readyOpsUnchecked() {
        return readyOps;
    }

    void setReadyOps(int ops) {
        readyOps = ops;
    }

    SelectionKey innerKey() {
        return innerKey;
    }

    void bindInner(SelectionKey key, boolean andFabric) {
        fabricToo = andFabric;
        innerKey = key;
        bound = andFabric ? BOUND_BOTH : BOUND_INNER;
        // An interest change may have raced with the registration that read the old value.
        copyInterestTo(key);
    }

    /**
     * Copies the interest set to the inner key until the copy is the latest value. Two threads copy at once when
     * an interest change races with the selector binding the key: one of them may have read the set before the
     * other changed it, and its late write would put the old set back (a lost change, found by
     * raceInterestOpsAgainstSelect). Whoever writes last re-reads the set afterwards and writes again if it moved.
     */
    private void copyInterestTo(SelectionKey ik) {
        try {
            for (;;) {
                int ops = interestOps;
                if (ik.interestOps() != ops) {
                    ik.interestOps(ops);
                }
                if (interestOps == ops) {
                    return;
                }
            }
        } catch (CancelledKeyException e) {
            // Unbound concurrently: the key is being cancelled.
        }
    }

    /** Drops the inner registration now, so that a JDK channel may be switched to blocking mode. */
    void cancelInner() {
        SelectionKey ik = innerKey;
        if (ik != null) {
            ik.cancel();
        }
    }

    @Override
    public void readinessChanged(Object source) {
        if (isValid()) {
            selector.enqueue(this);
        }
    }

    private void ensureValid() {
        if (!isValid()) {
            throw new CancelledKeyException();
        }
    }

    @Override
    public String toString() {
        return "RdmaSelectionKey[" + channel + (isValid() ? ", interest=" + interestOps + ", ready=" + readyOps : ", cancelled") + "]";
    }
}
