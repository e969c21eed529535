package io.rdmanio.core.engine;

import java.io.IOException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Where one blocked thread of an engine waits on the engine's wakeup channels itself (the completion queues'
 * wakeup pipes, {@link Engine#wakeupChannels()}), as a selector does: a peer's doorbell byte wakes that thread in
 * one hop, with no fabric thread between the peer and the waiter. One thread at a time holds it
 * ({@link #tryEnter}); the engine's other blocked threads park and rely on the fabric's relay, and the holder's
 * progress signals them when their connection changes.
 *
 * <p>The selector is opened by the wakeup channels' own provider (the JDK's, whatever the system-wide provider is)
 * at the first wait and kept for the engine's life. A wakeup channel's readiness belongs to its queue, which
 * consumes it when it is armed again or polled, as for a selector that watches it.
 *
 * <p>Thread-safety: {@link #tryEnter}, {@link #watch}, {@link #select} and {@link #exit} by the holder only;
 * {@link #wakeup}, {@link #flush} and {@link #close} from any thread.
 */
final class DoorbellSelector {

    private final ReentrantLock holder = new ReentrantLock();
    /** Opened at the first wait; null before, and for good if it could not be opened. */
    private volatile Selector selector;
    private volatile boolean closed;
    private boolean broken;

    // ---- the holder's
    private List<SelectableChannel> seen = List.of();
    private List<SelectableChannel> watching = List.of();
    private final Map<SelectableChannel, SelectionKey> keys = new IdentityHashMap<>();
    /** Notes a ready channel; its readiness is the queue's to consume (at the next arm or poll). */
    private final Consumer<SelectionKey> ringing = k -> rang = true;
    private boolean rang;

    /**
     * Takes the doorbell for the current thread; false when another thread holds it, the engine offers no wakeup
     * channel, or the doorbell is closed or broken (the caller parks instead).
     */
    boolean tryEnter(List<SelectableChannel> channels) {
        if (channels.isEmpty() || closed || !holder.tryLock()) {
            return false;
        }
        if (broken || closed || open(channels.get(0)) == null) {
            holder.unlock();
            return false;
        }
        return true;
    }

    void exit() {
        holder.unlock();
    }

    /**
     * The channels of {@code current} the holder may arm as watched: those registered with the selector. Keys of
     * channels the engine no longer offers are cancelled.
     */
    List<SelectableChannel> watch(List<SelectableChannel> current) {
        if (current == seen) {
            return watching;
        }
        Selector s = selector;
        ArrayList<SelectableChannel> ok = new ArrayList<>(current.size());
        for (SelectableChannel ch : current) {
            SelectionKey k = keys.get(ch);
            if (k != null && k.isValid()) {
                ok.add(ch);
                continue;
            }
            try {
                keys.put(ch, ch.register(s, SelectionKey.OP_READ));
                ok.add(ch);
            } catch (ClosedChannelException | CancelledKeyException | IllegalBlockingModeException
                     | IllegalArgumentException | ClosedSelectorException e) {
                // Closed with its queue, its old key not yet deregistered, or another provider's: relayed instead.
                keys.remove(ch);
            }
        }
        keys.entrySet().removeIf(e -> {
            if (current.contains(e.getKey())) {
                return false;
            }
            e.getValue().cancel();
            return true;
        });
        seen = current;
        watching = ok.size() == current.size() ? current : List.copyOf(ok);
        return watching;
    }

    /**
     * Blocks until a watched channel is readable, {@link #wakeup}, an interrupt or
     * {@code timeoutMillis} (0: no limit). Returns true when a doorbell rang: the caller drives progress.
     */
    boolean select(long timeoutMillis) {
        rang = false;
        try {
            selector.select(ringing, timeoutMillis);
        } catch (IOException | ClosedSelectorException e) {
            // Closed with the engine, or failing: later waits park instead.
            broken = true;
            return true;
        }
        return rang;
    }

    /** Makes the holder's select return (a signal for its waiter); harmless when nobody selects. */
    void wakeup() {
        Selector s = selector;
        if (s != null) {
            s.wakeup();
        }
    }

    /**
     * After a wakeup channel was closed: the selector gives a registered channel's descriptor back only when it
     * deregisters the key at its next select, so it is made to run one now (or the holder's current one returns).
     */
    void flush() {
        Selector s = selector;
        if (s == null) {
            return;
        }
        if (holder.tryLock()) {
            try {
                if (!closed) {
                    keys.entrySet().removeIf(e -> !e.getValue().isValid());
                    seen = null;
                    s.selectNow();
                }
            } catch (IOException | ClosedSelectorException e) {
                broken = true;
            } finally {
                holder.unlock();
            }
        } else {
            s.wakeup();
        }
    }

    void close() {
        closed = true;
        Selector s = selector;
        if (s != null) {
            try {
                s.close();
            } catch (IOException e) {
                // closing the engine: nothing to recover
            }
        }
    }

    /** The selector, opened by the provider of the wakeup channels (the JDK's, not the system-wide one). */
    private Selector open(SelectableChannel channel) {
        Selector s = selector;
        if (s == null) {
            try {
                s = channel.provider().openSelector();
            } catch (IOException | RuntimeException e) {
                broken = true;
                return null;
            }
            selector = s;
            if (closed) {
                close();
                return null;
            }
        }
        return s;
    }
}
