package io.rdmanio.selector;

import io.rdmanio.core.Logs;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.Engines;
import io.rdmanio.core.engine.SpinWait;
import io.rdmanio.core.fabric.Notifier;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.IllegalSelectorException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.AbstractSelectableChannel;
import java.nio.channels.spi.AbstractSelector;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;

/**
 * One selector for fabric channels, channels routed to the JDK's TCP and every channel of the JDK's own
 * provider. JDK channels are registered on one inner JDK selector; fabric channels report readiness from their
 * engine, and the selecting thread drives the engines' progress.
 *
 * <p>Threading: select operations lock the selector, then the selected-key set, as the JDK's selector does.
 * {@link #wakeup()}, registration, cancellation and interest changes work from any thread: they reach the
 * selecting thread through a lock-free stack of keys (fabric readiness changes use the same stack) and take
 * effect by the next select. Never block while holding the selector's lock except in the inner select.
 *
 * <p>Blocking: after the engines' spin budget the selector arms every engine and blocks in the inner select. An
 * engine's wakeup channels (a disni fabric's completion channel, as a JDK channel) are registered in the inner
 * selector, so a completion wakes it directly; engines without one run the notifier, which wakes the inner
 * selector. The wakeup channels' keys carry {@link #WAKEUP} and never reach the application.
 */
final class RdmaSelector extends AbstractSelector {

    private static final Logger LOG = Logs.get(RdmaSelector.class);
    private static final Method KILL = killMethod();
    /** The attachment of an engine's wakeup channel in the inner selector. */
    private static final Object WAKEUP = new Object();

    private final Selector inner;
    private final Notifier innerWakeup;

    private final Set<SelectionKey> keys = ConcurrentHashMap.newKeySet();
    private final Set<SelectionKey> publicKeys = Collections.unmodifiableSet(keys);
    private final SelectedKeySet selectedKeys = new SelectedKeySet();
    /** As the JDK's: elements may be removed, never added, by the application. */
    private final Set<SelectionKey> publicSelectedKeys = selectedKeys;

    /** Keys to look at again: new, routed, interest changed, or readiness may have changed. */
    private final AtomicReference<RdmaSelectionKey> pending = new AtomicReference<>();
    /** A wakeup() not yet consumed by a select. */
    private final AtomicBoolean wakeupPending = new AtomicBoolean();
    /** True while the selecting thread may block: readiness changes must wake the inner selector then. */
    private volatile boolean blocking;

    // -- selector thread (under this selector's lock)
    private final ArrayList<RdmaSelectionKey> candidates = new ArrayList<>();
    /** Keys reported OP_CONNECT whose ready set is settled once connected (see {@link #settleConnected}). */
    private final List<RdmaSelectionKey> connectReported = new ArrayList<>();
    private final ArrayList<Engine> engines = new ArrayList<>();
    /** Per engine (same index): its wakeup channel list as last seen, compared by reference. */
    private final ArrayList<List<SelectableChannel>> seen = new ArrayList<>();
    /** Per engine (same index): the seen list if all its channels are registered in the inner selector, else empty. */
    private final ArrayList<List<SelectableChannel>> watched = new ArrayList<>();
    /** The wakeup channels' keys in the inner selector. */
    private final IdentityHashMap<SelectableChannel, SelectionKey> wakeupKeys = new IdentityHashMap<>();
    private boolean inSelect;
    /** Counts collection passes, so that a select action sees each key at most once per pass. */
    private long pass;
    /** The earliest time a candidate becomes ready without an event ({@link System#nanoTime()}; 0: none). */
    private long earliestDeadline;
    /**
     * Set by a collection pass that found a key ready, whether or not that added or updated anything: the select
     * then returns, as the JDK's does (its epoll wait returns for every ready descriptor, and a key already in the
     * selected-key set with the same ready set counts 0). Blocking there instead would hang a select(Consumer)-less
     * loop that leaves a still-ready key in the selected set.
     */
    private boolean foundReady;

    RdmaSelector(RdmaSelectorProvider provider) throws IOException {
        super(provider);
        this.inner = provider.jdk().openSelector();
        // Only while the selecting thread may block: otherwise it progresses every engine before it blocks again,
        // and a wakeup would only cost a write now and an early return later (the notifier also runs on this
        // very thread when its progress takes a completion that woke it through a wakeup channel).
        this.innerWakeup = () -> {
            if (blocking) {
                inner.wakeup();
            }
        };
    }

    private RdmaSelectorProvider rdmaProvider() {
        return (RdmaSelectorProvider) provider();
    }

    @Override
    public Set<SelectionKey> keys() {
        ensureOpen();
        return publicKeys;
    }

    @Override
    public Set<SelectionKey> selectedKeys() {
        ensureOpen();
        return publicSelectedKeys;
    }

    @Override
    public int selectNow() throws IOException {
        return lockAndSelect(null, 0);
    }

    @Override
    public int select(long timeout) throws IOException {
        if (timeout < 0) {
            throw new IllegalArgumentException("Negative timeout");
        }
        return lockAndSelect(null, timeout == 0 ? -1 : timeout);
    }

    @Override
    public int select() throws IOException {
        return lockAndSelect(null, -1);
    }

    @Override
    public int select(Consumer<SelectionKey> action, long timeout) throws IOException {
        Objects.requireNonNull(action);
        if (timeout < 0) {
            throw new IllegalArgumentException("Negative timeout");
        }
        return lockAndSelect(action, timeout == 0 ? -1 : timeout);
    }

    @Override
    public int select(Consumer<SelectionKey> action) throws IOException {
        Objects.requireNonNull(action);
        return lockAndSelect(action, -1);
    }

    @Override
    public int selectNow(Consumer<SelectionKey> action) throws IOException {
        Objects.requireNonNull(action);
        return lockAndSelect(action, 0);
    }

    @Override
    public Selector wakeup() {
        if (wakeupPending.compareAndSet(false, true)) {
            inner.wakeup();
        }
        return this;
    }

    /**
     * @param timeoutMillis 0 for a non-blocking select, -1 for no limit
     */
    private int lockAndSelect(Consumer<SelectionKey> action, long timeoutMillis) throws IOException {
        synchronized (this) {
            ensureOpen();
            if (inSelect) {
                throw new IllegalStateException("select already in progress on this thread");
            }
            inSelect = true;
            try {
                synchronized (publicSelectedKeys) {
                    return implSelect(action, timeoutMillis);
                }
            } finally {
                inSelect = false;
            }
        }
    }

    private int implSelect(Consumer<SelectionKey> action, long timeoutMillis) throws IOException {
        long deadline = timeoutMillis > 0 ? System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis) : 0;
        int count = 0;
        // Set when the inner select just returned: its selected set is fresh, so a selectNow would only cost
        // another epoll_wait for each wakeup (a measurable share of a TCP round trip).
        boolean innerFresh = false;
        for (;;) {
            pass++;
            foundReady = false;
            // A wakeup made before this pass is this selection's, whatever ends it (ready keys, an interrupt), as
            // the JDK's selector consumes its wakeup with the events it returns; one made during the pass stays
            // for the next (a selection that returns is never kept from doing so, no wakeup is lost).
            boolean woken = wakeupPending.getAndSet(false);
            processCancelledKeys();
            drainPending();
            progressEngines();
            // Readiness that this progress produced is queued by the listeners: take it in the same pass.
            drainPending();
            count += collectFabric(action);
            if (!innerFresh) {
                inner.selectNow();
            }
            innerFresh = false;
            count += collectInner(action);
            if (!connectReported.isEmpty()) {
                settleConnected();
            }
            // Keys cancelled from here on (by an action, say) stay in keys() until the next pass or selection
            // operation deregisters them, as the JDK's selector leaves them.
            if (count > 0 || foundReady || timeoutMillis == 0 || !isOpen() || Thread.currentThread().isInterrupted()) {
                break;
            }
            if (woken || wakeupPending.getAndSet(false)) {
                break;
            }
            if (deadline != 0 && deadline - System.nanoTime() <= 0) {
                break;
            }
            if (spinEngines(deadline)) {
                continue;
            }
            blocking = true;
            try {
                if (pending.get() != null || wakeupPending.get() || !armEngines()) {
                    continue;
                }
                long wakeAt = deadline;
                if (earliestDeadline != 0 && (wakeAt == 0 || earliestDeadline - wakeAt < 0)) {
                    wakeAt = earliestDeadline;
                }
                long remaining = wakeAt == 0 ? 0 : wakeAt - System.nanoTime();
                if (wakeAt != 0 && remaining <= 0) {
                    continue;
                }
                // Rounded up: the inner selector's unit is the millisecond, and 0 would mean "no limit".
                long millis = wakeAt == 0 ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(remaining + 999_999));
                inner.select(millis);
                // Woken by the exit hook closing the engines: a selector blocked at exit stays, as on TCP.
                Engines.blockWhileHalting();
                innerFresh = true;
            } finally {
                blocking = false;
            }
            // Loop: readiness found by the inner select stays in its selected set until collected above.
        }
        if (timeoutMillis == 0) {
            // As the JDK's selectNow: it clears the effect of an earlier wakeup.
            wakeupPending.set(false);
        }
        return count;
    }

    /** Spins on progress for the engines' budget; {@code true} if something may have become ready. */
    private boolean spinEngines(long deadline) {
        if (engines.isEmpty()) {
            return false;
        }
        long spin = 0;
        for (int i = 0; i < engines.size(); i++) {
            spin = Math.max(spin, engines.get(i).spinNanos());
        }
        spin = SpinWait.budget(spin);
        if (spin <= 0) {
            return false;
        }
        long end = System.nanoTime() + spin;
        if (deadline != 0 && deadline - end < 0) {
            end = deadline;
        }
        int round = 0;
        do {
            progressEngines();
            if (pending.get() != null || wakeupPending.get() || Thread.currentThread().isInterrupted()) {
                return true;
            }
            SpinWait.pause(round++);
        } while (System.nanoTime() - end < 0);
        return false;
    }

    /** Arms every engine in use; {@code false} if one already has work (poll again instead of blocking). */
    private boolean armEngines() {
        for (int i = 0; i < engines.size(); i++) {
            Engine e = engines.get(i);
            if (e.wakeupChannels() != seen.get(i)) {
                watchWakeupChannels();
            }
            if (!e.arm(innerWakeup, watched.get(i))) {
                return false;
            }
        }
        return true;
    }

    private void addEngine(Engine e) {
        if (!engines.contains(e)) {
            engines.add(e);
            seen.add(List.of());
            watched.add(List.of());
        }
    }

    /**
     * Registers the engines' current wakeup channels in the inner selector and cancels the keys of channels no
     * engine offers any more (an engine closed). An engine whose channels could not all be registered is armed as
     * if it had none.
     */
    private void watchWakeupChannels() {
        IdentityHashMap<SelectableChannel, Boolean> wanted = new IdentityHashMap<>();
        for (int i = 0; i < engines.size(); i++) {
            List<SelectableChannel> channels = engines.get(i).wakeupChannels();
            boolean all = true;
            for (SelectableChannel ch : channels) {
                wanted.put(ch, Boolean.TRUE);
                SelectionKey ik = wakeupKeys.get(ch);
                if (ik != null && ik.isValid()) {
                    continue;
                }
                try {
                    wakeupKeys.put(ch, ch.register(inner, SelectionKey.OP_READ, WAKEUP));
                } catch (ClosedChannelException | CancelledKeyException | IllegalArgumentException
                         | java.nio.channels.IllegalBlockingModeException e) {
                    // Closed with its fabric, or its old key not yet deregistered: the notifier wakes this time.
                    wakeupKeys.remove(ch);
                    all = false;
                }
            }
            seen.set(i, channels);
            watched.set(i, all ? channels : List.of());
        }
        for (Iterator<java.util.Map.Entry<SelectableChannel, SelectionKey>> it = wakeupKeys.entrySet().iterator();
             it.hasNext(); ) {
            java.util.Map.Entry<SelectableChannel, SelectionKey> entry = it.next();
            if (!wanted.containsKey(entry.getKey())) {
                entry.getValue().cancel();
                it.remove();
            }
        }
    }

    private void progressEngines() {
        for (int i = 0; i < engines.size(); i++) {
            Engine e = engines.get(i);
            try {
                e.progress();
            } catch (Exception | LinkageError ex) {
                // progress() declares no failure; one connection's failure belongs to that connection and must
                // not escape from every select of every channel on the engine.
                LOG.warn("progress of the {} engine failed; selecting on", e.fabricName(), ex);
            }
        }
    }

    /** Any thread: the key is looked at again by the next select (and wakes a blocked one). */
    void enqueue(RdmaSelectionKey key) {
        if (!key.queued.compareAndSet(false, true)) {
            return;
        }
        RdmaSelectionKey head;
        do {
            head = pending.get();
            key.nextQueued = head;
        } while (!pending.compareAndSet(head, key));
        if (blocking) {
            inner.wakeup();
        }
    }

    private void drainPending() {
        RdmaSelectionKey k = pending.getAndSet(null);
        while (k != null) {
            RdmaSelectionKey next = k.nextQueued;
            k.nextQueued = null;
            k.queued.set(false);
            if (k.isValid()) {
                tryBind(k);
                if ((k.bound == RdmaSelectionKey.BOUND_FABRIC || k.bound == RdmaSelectionKey.BOUND_BOTH) && !k.candidate) {
                    k.candidate = true;
                    candidates.add(k);
                }
            }
            k = next;
        }
    }

    /** Binds a key to where its channel now is; nothing to do if it is already there or still unrouted. */
    private void tryBind(RdmaSelectionKey k) {
        SelectableChannel ch = k.channel();
        if (k.bound != RdmaSelectionKey.BOUND_NONE) {
            if (k.bound != RdmaSelectionKey.BOUND_FABRIC || ((RoutedChannel) ch).route() != RoutedChannel.ROUTE_DELEGATE) {
                return;
            }
            // A client under a both rule fell back from the fabric to TCP (the channel dropped the listener).
            k.bound = RdmaSelectionKey.BOUND_NONE;
        }
        SelectableChannel target;
        if (ch instanceof RoutedChannel) {
            RoutedChannel rc = (RoutedChannel) ch;
            int route = rc.route();
            if (route == RoutedChannel.ROUTE_FABRIC) {
                rc.addFabricListener(k);
                k.bound = RdmaSelectionKey.BOUND_FABRIC;
                addEngine(rc.fabricEngine());
                return;
            }
            if (route != RoutedChannel.ROUTE_DELEGATE && route != RoutedChannel.ROUTE_BOTH) {
                return;
            }
            target = rc.delegate();
        } else {
            target = ch;
        }
        boolean both = ch instanceof RoutedChannel && ((RoutedChannel) ch).route() == RoutedChannel.ROUTE_BOTH;
        try {
            k.bindInner(target.register(inner, k.interestOpsUnchecked(), k), both);
        } catch (ClosedChannelException | CancelledKeyException e) {
            // The channel was closed: its key is cancelled and dropped at the next select.
            return;
        }
        if (both) {
            RoutedChannel rc = (RoutedChannel) ch;
            rc.addFabricListener(k);
            addEngine(rc.fabricEngine());
        }
    }

    private int collectFabric(Consumer<SelectionKey> action) {
        int count = 0;
        int keep = 0;
        long earliest = 0;
        for (int i = 0; i < candidates.size(); i++) {
            RdmaSelectionKey k = candidates.get(i);
            int ops = 0;
            long deadline = 0;
            // A channel being closed (closed first, its key cancelled after) is never reported, as the JDK's
            // selector reports nothing of a channel that is closed while registered: its close fires the fabric's
            // readiness, and a key reported now would be cancelled in the application's hands.
            if (k.isValid() && (k.bound == RdmaSelectionKey.BOUND_FABRIC || k.bound == RdmaSelectionKey.BOUND_BOTH)
                && k.channel().isOpen()) {
                RoutedChannel rc = (RoutedChannel) k.channel();
                ops = rc.fabricReadyOps() & k.interestOpsUnchecked();
                if (ops == 0 && (k.interestOpsUnchecked() & SelectionKey.OP_CONNECT) != 0) {
                    deadline = rc.fabricDeadline();
                }
            }
            if (ops == 0 && deadline == 0) {
                // Not ready (or not of interest): a readiness change or an interest change queues it again.
                k.candidate = false;
                continue;
            }
            candidates.set(keep++, k);
            if (ops != 0) {
                count += report(k, ops, action);
            } else if (earliest == 0 || deadline - earliest < 0) {
                // Ready at a time, not by an event: the blocking select must wake by then.
                earliest = deadline;
            }
        }
        earliestDeadline = earliest;
        for (int i = candidates.size() - 1; i >= keep; i--) {
            candidates.remove(i);
        }
        return count;
    }

    private int collectInner(Consumer<SelectionKey> action) {
        Set<SelectionKey> ready = inner.selectedKeys();
        if (ready.isEmpty()) {
            return 0;
        }
        int count = 0;
        for (Iterator<SelectionKey> it = ready.iterator(); it.hasNext(); ) {
            SelectionKey ik = it.next();
            it.remove();
            if (ik.attachment() == WAKEUP) {
                // A completion: the engines' progress at the top of the select loop took it.
                continue;
            }
            RdmaSelectionKey k = (RdmaSelectionKey) ik.attachment();
            if (!k.isValid() || !ik.isValid() || !k.channel().isOpen()) {
                continue;
            }
            int ops;
            try {
                ops = ik.readyOps() & k.interestOpsUnchecked();
            } catch (CancelledKeyException e) {
                continue;
            }
            if (ops != 0) {
                count += report(k, ops, action);
            }
        }
        return count;
    }

    /**
     * Keys that were reported OP_CONNECT, once their channel finished connecting and they are not in the selected
     * set: their ready set loses OP_CONNECT, as the JDK's does at the next selection (the connected socket polled
     * for OP_CONNECT is writable, an event that translates to nothing of OP_CONNECT, and the key's ready set is
     * replaced by the translation). Other readiness of interest is reported as usual.
     */
    private void settleConnected() {
        for (int i = connectReported.size() - 1; i >= 0; i--) {
            RdmaSelectionKey k = connectReported.get(i);
            boolean drop = !k.isValid();
            if (!drop && ((SocketChannel) k.channel()).isConnected()) {
                drop = true;
                if (k.selectedIndex < 0) {
                    k.setReadyOps(k.readyOpsUnchecked() & ~SelectionKey.OP_CONNECT);
                }
            }
            if (drop) {
                k.connectReported = false;
                connectReported.remove(i);
            }
        }
    }

    /** As the JDK: readiness accumulates in a key already selected; counts keys added or updated. */
    private int report(RdmaSelectionKey k, int ops, Consumer<SelectionKey> action) {
        foundReady = true;
        if ((ops & SelectionKey.OP_CONNECT) != 0 && !k.connectReported) {
            k.connectReported = true;
            connectReported.add(k);
        }
        if (action != null) {
            if (k.actionPass == pass) {
                // A server on both transports: its key was handed to the action once already in this pass.
                k.setReadyOps(k.readyOpsUnchecked() | ops);
                return 0;
            }
            k.actionPass = pass;
            k.setReadyOps(ops);
            action.accept(k);
            return 1;
        }
        if (selectedKeys.contains(k)) {
            int old = k.readyOpsUnchecked();
            if ((old | ops) == old) {
                return 0;
            }
            k.setReadyOps(old | ops);
            return 1;
        }
        k.setReadyOps(ops);
        selectedKeys.addKey(k);
        return 1;
    }

    private void processCancelledKeys() throws IOException {
        Set<SelectionKey> cancelled = cancelledKeys();
        synchronized (cancelled) {
            if (cancelled.isEmpty()) {
                return;
            }
            for (SelectionKey sk : cancelled) {
                dropKey((RdmaSelectionKey) sk);
            }
            cancelled.clear();
        }
    }

    private void dropKey(RdmaSelectionKey k) throws IOException {
        SelectableChannel ch = k.channel();
        if (k.bound == RdmaSelectionKey.BOUND_INNER || k.bound == RdmaSelectionKey.BOUND_BOTH) {
            k.cancelInner();
        }
        if (k.bound == RdmaSelectionKey.BOUND_FABRIC || k.bound == RdmaSelectionKey.BOUND_BOTH) {
            ((RoutedChannel) ch).removeFabricListener(k);
        }
        k.bound = RdmaSelectionKey.BOUND_NONE;
        keys.remove(k);
        selectedKeys.remove(k);
        if (k.internal) {
            // Never in the channel's key list (see registerInternal): nothing to deregister there.
            ((RoutedChannel) ch).detachKey(k);
            return;
        }
        deregister(k);
        if (ch instanceof RoutedChannel) {
            ((RoutedChannel) ch).detachKey(k);
        } else if (!ch.isOpen() && !ch.isRegistered()) {
            // A closed JDK channel defers closing its descriptor until no selector holds it: this was the last.
            killJdkChannel(ch);
        }
    }

    @Override
    protected SelectionKey register(AbstractSelectableChannel ch, int ops, Object attachment) {
        ensureOpen();
        if (!(ch instanceof RoutedChannel) && ch.provider() != rdmaProvider().jdk()) {
            throw new IllegalSelectorException();
        }
        RdmaSelectionKey k = new RdmaSelectionKey(this, ch, ops, attachment);
        keys.add(k);
        if (ch instanceof RoutedChannel) {
            ((RoutedChannel) ch).attachKey(k);
        }
        enqueue(k);
        return k;
    }

    /**
     * Registers a channel of this provider for the provider's own waiting (a blocking accept on both transports):
     * the key stays out of the channel's key list, so it neither holds the channel non-blocking nor shows in
     * {@link java.nio.channels.SelectableChannel#keyFor}. Dropped when this selector closes.
     */
    SelectionKey registerInternal(AbstractSelectableChannel ch, int ops) {
        ensureOpen();
        RdmaSelectionKey k = new RdmaSelectionKey(this, ch, ops, null);
        k.internal = true;
        keys.add(k);
        ((RoutedChannel) ch).attachKey(k);
        enqueue(k);
        return k;
    }

    @Override
    protected void implCloseSelector() throws IOException {
        inner.wakeup();
        synchronized (this) {
            synchronized (publicSelectedKeys) {
                processCancelledKeys();
                for (Iterator<SelectionKey> it = keys.iterator(); it.hasNext(); ) {
                    RdmaSelectionKey k = (RdmaSelectionKey) it.next();
                    it.remove();
                    dropKey(k);
                }
                selectedKeys.clear();
                candidates.clear();
                engines.clear();
                seen.clear();
                watched.clear();
                wakeupKeys.clear();
                inner.close();
            }
        }
    }

    private void ensureOpen() {
        if (!isOpen()) {
            throw new ClosedSelectorException();
        }
    }

    private static Method killMethod() {
        try {
            return Class.forName("sun.nio.ch.SelChImpl").getMethod("kill");
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private static void killJdkChannel(SelectableChannel ch) throws IOException {
        if (KILL == null) {
            return;
        }
        try {
            KILL.invoke(ch);
        } catch (java.lang.reflect.InvocationTargetException e) {
            if (e.getCause() instanceof IOException) {
                throw (IOException) e.getCause();
            }
            throw new IllegalStateException("closing " + ch, e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("closing " + ch + " needs --add-exports java.base/sun.nio.ch=ALL-UNNAMED", e);
        }
    }

    /**
     * The selected-key set: the application may remove keys (directly or through the iterator), never add them.
     * Each key records its index here, so adding, finding and removing a key take constant time and allocate
     * nothing (the JDK's HashSet allocates a node per selected key). Iteration runs from the last element down,
     * so that removing through the iterator (which moves the last element into the hole) never skips one.
     * Guarded as the JDK's selected-key set: by the selector during select, by the set's own monitor otherwise.
     */
    private static final class SelectedKeySet extends AbstractSet<SelectionKey> {
        private RdmaSelectionKey[] keys = new RdmaSelectionKey[16];
        private int size;
        private int modCount;

        void addKey(RdmaSelectionKey k) {
            if (contains(k)) {
                return;
            }
            if (size == keys.length) {
                keys = java.util.Arrays.copyOf(keys, size * 2);
            }
            keys[size] = k;
            k.selectedIndex = size++;
            modCount++;
        }

        @Override
        public boolean add(SelectionKey key) {
            throw new UnsupportedOperationException();
        }

        @Override
        public int size() {
            return size;
        }

        @Override
        public boolean isEmpty() {
            return size == 0;
        }

        @Override
        public boolean contains(Object o) {
            if (!(o instanceof RdmaSelectionKey)) {
                return false;
            }
            int i = ((RdmaSelectionKey) o).selectedIndex;
            return i >= 0 && i < size && keys[i] == o;
        }

        @Override
        public boolean remove(Object o) {
            if (!contains(o)) {
                return false;
            }
            removeAt(((RdmaSelectionKey) o).selectedIndex);
            return true;
        }

        private void removeAt(int i) {
            RdmaSelectionKey k = keys[i];
            int last = --size;
            if (i != last) {
                keys[i] = keys[last];
                keys[i].selectedIndex = i;
            }
            keys[last] = null;
            k.selectedIndex = -1;
            modCount++;
        }

        @Override
        public void clear() {
            for (int i = 0; i < size; i++) {
                keys[i].selectedIndex = -1;
                keys[i] = null;
            }
            size = 0;
            modCount++;
        }

        @Override
        public Iterator<SelectionKey> iterator() {
            return new Iterator<>() {
                private int cursor = size;
                private int lastReturned = -1;
                private int expectedModCount = modCount;

                @Override
                public boolean hasNext() {
                    return cursor > 0;
                }

                @Override
                public SelectionKey next() {
                    if (modCount != expectedModCount) {
                        throw new java.util.ConcurrentModificationException();
                    }
                    if (cursor <= 0) {
                        throw new java.util.NoSuchElementException();
                    }
                    lastReturned = --cursor;
                    return keys[lastReturned];
                }

                @Override
                public void remove() {
                    if (lastReturned < 0) {
                        throw new IllegalStateException();
                    }
                    if (modCount != expectedModCount) {
                        throw new java.util.ConcurrentModificationException();
                    }
                    removeAt(lastReturned);
                    lastReturned = -1;
                    expectedModCount = modCount;
                }
            };
        }
    }
}
