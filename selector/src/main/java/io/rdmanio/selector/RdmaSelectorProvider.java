package io.rdmanio.selector;

import io.rdmanio.selector.config.ConfigLoader;
import io.rdmanio.selector.config.RdmanioConfig;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.ProtocolFamily;
import java.net.StandardProtocolFamily;
import java.nio.channels.Channel;
import java.nio.channels.DatagramChannel;
import java.nio.channels.Pipe;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.AbstractSelector;
import java.nio.channels.spi.SelectorProvider;
import java.util.Objects;

/**
 * The java.nio provider of rdmanio: socket channels routed once (at a server's bind, at an unbound client's
 * connect) either to the JDK's own TCP or to a fabric, and one selector that serves both kinds together with
 * every channel of the JDK's default provider (pipes, datagram channels).
 *
 * <p>Thread-safe. Installed by the agent ({@code -javaagent:rdmanio-agent.jar}, see
 * {@link io.rdmanio.selector.agent.RdmanioAgent}), with
 * {@code -Djava.nio.channels.spi.SelectorProvider=io.rdmanio.selector.RdmaSelectorProvider}
 * (which needs {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED}), or built directly from a configuration.
 */
public class RdmaSelectorProvider extends SelectorProvider {

    private static final String EXPORTS_FLAG = "--add-exports java.base/sun.nio.ch=ALL-UNNAMED";

    private final RdmanioConfig config;
    private final SelectorProvider jdk;

    /** Used by {@code java.nio.channels.spi.SelectorProvider}: the configuration comes from system properties. */
    public RdmaSelectorProvider() {
        this(ConfigLoader.load());
    }

    public RdmaSelectorProvider(RdmanioConfig config) {
        this.config = Objects.requireNonNull(config, "config");
        this.jdk = jdkProvider();
    }

    /**
     * The JDK's own provider. {@link SelectorProvider#provider()} cannot be used: when this class is the
     * system-wide provider it would return this very object.
     */
    static SelectorProvider jdkProvider() {
        try {
            Class<?> c = Class.forName("sun.nio.ch.DefaultSelectorProvider");
            Method get = c.getMethod("get");
            return (SelectorProvider) get.invoke(null);
        } catch (IllegalAccessException | IllegalAccessError e) {
            throw new IllegalStateException("rdmanio needs the JVM flag " + EXPORTS_FLAG
                    + " to reach the JDK's own SelectorProvider (the agent, -javaagent:rdmanio-agent.jar, exports it"
                    + " by itself)", e);
        } catch (ClassNotFoundException | NoSuchMethodException | InvocationTargetException | ClassCastException e) {
            throw new IllegalStateException("this JDK has no usable sun.nio.ch.DefaultSelectorProvider.get()"
                    + " (run with " + EXPORTS_FLAG + " on JDK 17 or later)", e);
        }
    }

    /** The configuration this provider routes by. */
    public RdmanioConfig config() {
        return config;
    }

    /** The JDK's default provider, which opens every channel that is not routed here. */
    SelectorProvider jdk() {
        return jdk;
    }

    @Override
    public DatagramChannel openDatagramChannel() throws IOException {
        // Ours, standing on the JDK's, so that it may share this provider's selectors (see RdmaDatagramChannel).
        return new RdmaDatagramChannel(this, jdk.openDatagramChannel());
    }

    @Override
    public DatagramChannel openDatagramChannel(ProtocolFamily family) throws IOException {
        return new RdmaDatagramChannel(this, jdk.openDatagramChannel(family));
    }

    @Override
    public Pipe openPipe() throws IOException {
        return new RdmaPipe(this, jdk.openPipe());
    }

    @Override
    public AbstractSelector openSelector() throws IOException {
        return new RdmaSelector(this);
    }

    @Override
    public ServerSocketChannel openServerSocketChannel() throws IOException {
        return new RdmaServerSocketChannel(this, null);
    }

    @Override
    public SocketChannel openSocketChannel() throws IOException {
        return RdmaSocketChannel.open(this, null);
    }

    @Override
    public SocketChannel openSocketChannel(ProtocolFamily family) throws IOException {
        Objects.requireNonNull(family, "'family' is null");
        if (family == StandardProtocolFamily.INET || family == StandardProtocolFamily.INET6) {
            return RdmaSocketChannel.open(this, family);
        }
        // Unix-domain sockets are never routed: the JDK's own channel serves them.
        return jdk.openSocketChannel(family);
    }

    @Override
    public ServerSocketChannel openServerSocketChannel(ProtocolFamily family) throws IOException {
        Objects.requireNonNull(family, "'family' is null");
        if (family == StandardProtocolFamily.INET || family == StandardProtocolFamily.INET6) {
            return new RdmaServerSocketChannel(this, family);
        }
        return jdk.openServerSocketChannel(family);
    }

    @Override
    public Channel inheritedChannel() throws IOException {
        return jdk.inheritedChannel();
    }
}
