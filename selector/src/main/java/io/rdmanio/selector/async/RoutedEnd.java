package io.rdmanio.selector.async;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NetworkChannel;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The two bodies an asynchronous channel can have: the JDK's own asynchronous channel ({@code J}), which it is
 * until routing decides and stays when routing says TCP, and an rdmanio channel ({@code F}, non-blocking) once a
 * rule routes it. Holds the options set before routing (replayed on the rdmanio channel), the option and address
 * calls that go to whichever body it has, and the registration with the group's poller.
 *
 * <p>Thread-safe for the fields; {@link #watch} runs on the poller thread only.
 *
 * @param <J> the JDK's asynchronous channel type
 * @param <F> the rdmanio channel type
 */
final class RoutedEnd<J extends NetworkChannel, F extends SelectableChannel & NetworkChannel> {

    private volatile J jdk;
    private volatile F fabric;
    /** The routed channel's close ran its follow-up (the group's count): once, whoever closed it first. */
    private final java.util.concurrent.atomic.AtomicBoolean routedCloseDone = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile AsyncPoller poller;
    /** Poller thread only. */
    private SelectionKey key;
    private final List<Object[]> earlyOptions = new ArrayList<>();

    RoutedEnd(J jdk) {
        this.jdk = jdk;
    }

    /** An end routed from the start (an accepted fabric connection). */
    RoutedEnd(F fabric, AsyncPoller poller) {
        this.fabric = fabric;
        this.poller = poller;
    }

    /** The JDK's channel while this end has no rdmanio one; null once routed (or closed while routing). */
    J jdkIfUnrouted() {
        return fabric == null ? jdk : null;
    }

    /** The rdmanio channel; null while unrouted. */
    F fabric() {
        return fabric;
    }

    J jdkOrClosed() throws ClosedChannelException {
        J j = jdk;
        if (j == null) {
            throw new ClosedChannelException();
        }
        return j;
    }

    /** Sets the options set so far on {@code ch}, before it binds or connects. */
    void carryOptionsTo(F ch) throws IOException {
        synchronized (earlyOptions) {
            for (Object[] o : earlyOptions) {
                set(ch, (SocketOption<?>) o[0], o[1]);
            }
        }
    }

    /**
     * Makes {@code ch} (non-blocking) this end's body, admitted to the group's poller, and closes the JDK's
     * channel. On failure nothing changes (the caller closes {@code ch}).
     */
    void become(F ch, AsyncGroup group, java.nio.channels.Channel owner) throws IOException {
        J j = jdkOrClosed();
        poller = group.admit(owner);
        fabric = ch;
        jdk = null;
        j.close();
    }

    @SuppressWarnings("unchecked")
    private static <T> void set(NetworkChannel ch, SocketOption<T> name, Object value) throws IOException {
        ch.setOption(name, (T) value);
    }

    static InetSocketAddress checkAddress(SocketAddress address) {
        if (!(address instanceof InetSocketAddress)) {
            throw new UnsupportedAddressTypeException();
        }
        InetSocketAddress isa = (InetSocketAddress) address;
        if (isa.isUnresolved()) {
            throw new UnresolvedAddressException();
        }
        return isa;
    }

    <T> void setOption(SocketOption<T> name, T value) throws IOException {
        setOption(name, value, false);
    }

    /**
     * As the JDK's asynchronous channels, in their order: a null name, an option the channel does not have, a
     * closed channel, a socket whose output is shut down ({@code outputShutdown}), a null value.
     */
    <T> void setOption(SocketOption<T> name, T value, boolean outputShutdown) throws IOException {
        if (name == null) {
            throw new NullPointerException();
        }
        F f = fabric;
        if (f != null) {
            supported(f, name);
            if (!f.isOpen()) {
                throw new ClosedChannelException();
            }
            if (outputShutdown) {
                throw new IOException("Connection has been shutdown for writing");
            }
            if (value == null) {
                throw new IllegalArgumentException("Invalid option value");
            }
            f.setOption(name, value);
            return;
        }
        jdkOrClosed().setOption(name, value);
        synchronized (earlyOptions) {
            earlyOptions.add(new Object[] {name, value});
        }
    }

    <T> T getOption(SocketOption<T> name) throws IOException {
        F f = fabric;
        if (f != null) {
            supported(f, name);
            return f.getOption(name);
        }
        return jdkOrClosed().getOption(name);
    }

    /**
     * The options of a routed channel that the JDK's asynchronous channel of its kind has too: a socket channel's
     * {@code SO_LINGER}, {@code IP_TOS} and {@code SO_OOBINLINE} are not options of an asynchronous one.
     */
    private static Set<SocketOption<?>> asynchronous(Set<SocketOption<?>> channelOptions) {
        Set<SocketOption<?>> s = new HashSet<>(channelOptions);
        s.removeIf(o -> o == StandardSocketOptions.SO_LINGER || o == StandardSocketOptions.IP_TOS
            || o.name().equals("SO_OOBINLINE"));
        return Collections.unmodifiableSet(s);
    }

    /** As the JDK's asynchronous channels: an option the channel does not have is an unsupported operation. */
    private static void supported(NetworkChannel ch, SocketOption<?> name) {
        if (!asynchronous(ch.supportedOptions()).contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
    }

    Set<SocketOption<?>> supportedOptions() {
        F f = fabric;
        if (f != null) {
            return asynchronous(f.supportedOptions());
        }
        J j = jdk;
        return j != null ? j.supportedOptions() : Set.of();
    }

    SocketAddress localAddress() throws IOException {
        F f = fabric;
        return f != null ? f.getLocalAddress() : jdkOrClosed().getLocalAddress();
    }

    boolean isOpen() {
        F f = fabric;
        if (f != null) {
            return f.isOpen();
        }
        J j = jdk;
        return j != null && j.isOpen();
    }

    /**
     * Closes whichever body this end has; when it was an open rdmanio channel, {@code afterRouted} then runs
     * (failing what waits, leaving the group), even if the close threw.
     */
    void close(Runnable afterRouted) throws IOException {
        F f = fabric;
        if (f == null) {
            J j = jdk;
            if (j != null) {
                j.close();
            }
            return;
        }
        // Once, also when the rdmanio channel closed itself first (a refused connect closes it, as the JDK's
        // finishConnect does): the group counts this channel until then, and would never terminate.
        if (!routedCloseDone.compareAndSet(false, true)) {
            return;
        }
        try {
            f.close();
        } finally {
            afterRouted.run();
        }
    }

    /** Runs {@code update} on the poller thread (a routed end only). */
    void interestChanged(Runnable update) {
        AsyncPoller p = poller;
        if (p != null) {
            p.submit(update);
        }
    }

    /**
     * Poller thread: makes the poller watch {@code ops} of the rdmanio channel for {@code ready}. Returns the
     * failure (as the operations waiting should see it) when the channel cannot be watched, else null.
     */
    Throwable watch(int ops, AsyncPoller.Ready ready) {
        F f = fabric;
        if (f == null || !f.isOpen()) {
            return null;
        }
        try {
            if (key == null) {
                if (ops != 0) {
                    key = f.register(poller.selector(), ops, ready);
                }
            } else if (key.isValid()) {
                key.interestOps(ops);
            }
            return null;
        } catch (IOException | RuntimeException e) {
            return e instanceof ClosedChannelException ? new AsynchronousCloseException() : e;
        }
    }

    @Override
    public String toString() {
        F f = fabric;
        return String.valueOf(f != null ? f : jdk);
    }
}
