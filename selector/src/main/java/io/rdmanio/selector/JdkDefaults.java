package io.rdmanio.selector;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketOption;
import java.nio.channels.NetworkChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The option set and the option defaults of the JDK's own TCP channels, read once from a throwaway channel of
 * each kind, so that an unrouted or fabric channel answers {@code supportedOptions()} and {@code getOption} as
 * the JDK's channel would on this platform; and the kernel's verdict on a value ({@link #normalized}).
 */
final class JdkDefaults {

    private static volatile JdkDefaults socket;
    private static volatile JdkDefaults serverSocket;

    final Set<SocketOption<?>> options;
    private final Map<SocketOption<?>, Object> values;
    private final SelectorProvider jdk;
    private final boolean server;
    /** An unconnected channel of this kind, kept open (one descriptor per JVM) to try values on. */
    private NetworkChannel scratch;

    private JdkDefaults(NetworkChannel ch, SelectorProvider jdk, boolean server) throws IOException {
        this.jdk = jdk;
        this.server = server;
        this.options = Collections.unmodifiableSet(ch.supportedOptions());
        Map<SocketOption<?>, Object> v = new HashMap<>();
        for (SocketOption<?> o : options) {
            try {
                v.put(o, ch.getOption(o));
            } catch (IOException | UnsupportedOperationException e) {
                // An option the platform lists but cannot read unbound: no default known.
            }
        }
        this.values = v;
    }

    Object defaultValue(SocketOption<?> name) {
        return values.get(name);
    }

    /**
     * What the JDK's channel of this kind reports after {@code setOption(name, value)}: the value is set on an
     * unconnected JDK channel and read back, so the JDK and the kernel check it (an {@code IP_TOS} beyond 0-255,
     * a keep-alive time of 0, a read-only option throw as they do there) and round it as they do ({@code IP_TOS}
     * 255 reads 252, {@code SO_RCVBUF} the kernel's doubled size). The channel's own connection is not a kernel
     * socket, so nothing else would.
     */
    synchronized <T> T normalized(SocketOption<T> name, T value) throws IOException {
        if (scratch == null || !scratch.isOpen()) {
            scratch = server ? jdk.openServerSocketChannel() : jdk.openSocketChannel();
        }
        scratch.setOption(name, value);
        try {
            return scratch.getOption(name);
        } catch (IOException | UnsupportedOperationException e) {
            // Settable but not readable on this platform: the value as given.
            return value;
        }
    }

    static JdkDefaults socket(SelectorProvider jdk) {
        JdkDefaults d = socket;
        if (d == null) {
            try (NetworkChannel ch = jdk.openSocketChannel()) {
                socket = d = new JdkDefaults(ch, jdk, false);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the JDK's socket option defaults", e);
            }
        }
        return d;
    }

    static JdkDefaults serverSocket(SelectorProvider jdk) {
        JdkDefaults d = serverSocket;
        if (d == null) {
            try (NetworkChannel ch = jdk.openServerSocketChannel()) {
                serverSocket = d = new JdkDefaults(ch, jdk, true);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the JDK's server socket option defaults", e);
            }
        }
        return d;
    }
}
