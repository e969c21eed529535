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
 * the JDK's channel would on this platform. Immutable.
 */
final class JdkDefaults {

    private static volatile JdkDefaults socket;
    private static volatile JdkDefaults serverSocket;

    final Set<SocketOption<?>> options;
    private final Map<SocketOption<?>, Object> values;

    private JdkDefaults(NetworkChannel ch) throws IOException {
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

    static JdkDefaults socket(SelectorProvider jdk) {
        JdkDefaults d = socket;
        if (d == null) {
            try (NetworkChannel ch = jdk.openSocketChannel()) {
                socket = d = new JdkDefaults(ch);
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
                serverSocket = d = new JdkDefaults(ch);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the JDK's server socket option defaults", e);
            }
        }
        return d;
    }
}
