package io.rdmanio.selector.async;

import io.rdmanio.core.Logs;
import io.rdmanio.selector.RdmaSelectorProvider;
import io.rdmanio.selector.config.RoutedApis;
import java.io.IOException;
import java.nio.channels.AsynchronousChannelGroup;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.IllegalChannelGroupException;
import java.nio.channels.spi.AsynchronousChannelProvider;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;

/**
 * NIO.2 under the routing rules: the JVM's {@link AsynchronousChannelProvider} once the agent installs it (or
 * {@code -Djava.nio.channels.spi.AsynchronousChannelProvider=io.rdmanio.selector.async.RdmaAsynchronousChannelProvider}
 * beside the selector provider). An asynchronous channel is decided once, as a socket channel is: a client at
 * {@code connect} (bound first or not), a server at {@code bind}. One the rules leave on TCP is the JDK's own
 * channel in the JDK's own group, every call handed to it; a routed one is carried by rdmanio's channels, waited
 * for by the group's poller thread, its completions run on the group's threads.
 *
 * <p>Thread-safe.
 */
public final class RdmaAsynchronousChannelProvider extends AsynchronousChannelProvider {

    /** The JDK reads this property the first time anything asks for the asynchronous channel provider. */
    public static final String PROVIDER_PROPERTY = "java.nio.channels.spi.AsynchronousChannelProvider";
    /** The property that keeps NIO.2 off the rules ({@code false}); on by default. */
    public static final String PROPERTY = "rdmanio.asyncChannels";

    private static final Logger LOG = Logs.get("io.rdmanio.routing");

    private final AsynchronousChannelProvider jdk;
    private final RdmaSelectorProvider selectors;
    private final Object lock = new Object();
    private AsyncGroup defaultGroup;
    private ScheduledThreadPoolExecutor timers;

    /**
     * Makes this the JVM's asynchronous channel provider (the agent, before the application runs) when the rules
     * route anything and {@code rdmanio.asyncChannels} is not {@code false}; returns whether it did. The provider
     * is loaded by the JDK at the first asynchronous channel, not here.
     */
    public static boolean install(RdmaSelectorProvider selectors) {
        String off = RoutedApis.notRoutedReason(PROPERTY, selectors.config().router());
        if (off != null) {
            RoutedApis.asyncChannels(off);
            return false;
        }
        String wanted = RdmaAsynchronousChannelProvider.class.getName();
        String given = System.getProperty(PROVIDER_PROPERTY);
        if (given != null && !given.equals(wanted)) {
            RoutedApis.asyncChannels("not routed: -D" + PROVIDER_PROPERTY + "=" + given + " names another provider");
            LOG.warn("rdmanio: NIO.2 asynchronous channels are not routed: -D{}={} names another provider",
                PROVIDER_PROPERTY, given);
            return false;
        }
        System.setProperty(PROVIDER_PROPERTY, wanted);
        RoutedApis.asyncChannels("routed");
        return true;
    }

    /** As the JDK constructs it from the property: rdmanio's selector provider must be the JVM's. */
    public RdmaAsynchronousChannelProvider() {
        this(installedSelectorProvider());
    }

    public RdmaAsynchronousChannelProvider(RdmaSelectorProvider selectors) {
        this.selectors = selectors;
        this.jdk = jdkProvider();
    }

    private static RdmaSelectorProvider installedSelectorProvider() {
        SelectorProvider p = SelectorProvider.provider();
        if (!(p instanceof RdmaSelectorProvider)) {
            throw new IllegalStateException("rdmanio's AsynchronousChannelProvider needs rdmanio's SelectorProvider "
                    + "(-Djava.nio.channels.spi.SelectorProvider=" + RdmaSelectorProvider.class.getName()
                    + " or the agent); the JVM's is " + p.getClass().getName());
        }
        return (RdmaSelectorProvider) p;
    }

    /** The JDK's own provider, reached as the JDK reaches it when no other is set. */
    private static AsynchronousChannelProvider jdkProvider() {
        try {
            return (AsynchronousChannelProvider) Class.forName("sun.nio.ch.DefaultAsynchronousChannelProvider")
                .getMethod("create").invoke(null);
        } catch (ReflectiveOperationException | IllegalAccessError e) {
            throw new IllegalStateException("cannot reach the JDK's AsynchronousChannelProvider (sun.nio.ch must be "
                    + "exported to rdmanio: the agent does, or --add-exports java.base/sun.nio.ch=ALL-UNNAMED): " + e, e);
        }
    }

    AsynchronousChannelProvider jdk() {
        return jdk;
    }

    RdmaSelectorProvider selectors() {
        return selectors;
    }

    /** A daemon timer thread for read and write timeouts, started at the first timed operation. */
    ScheduledThreadPoolExecutor timers() {
        synchronized (lock) {
            if (timers == null) {
                timers = new ScheduledThreadPoolExecutor(1, r -> {
                    Thread t = new Thread(r, "rdmanio-async-timer");
                    t.setDaemon(true);
                    return t;
                });
                timers.setRemoveOnCancelPolicy(true);
            }
            return timers;
        }
    }

    /** {@code group} as rdmanio's group; null gives the default group. */
    AsyncGroup group(AsynchronousChannelGroup group) throws IOException {
        if (group == null) {
            synchronized (lock) {
                if (defaultGroup == null) {
                    defaultGroup = new AsyncGroup(this, null);
                }
                return defaultGroup;
            }
        }
        if (!(group instanceof AsyncGroup) || ((AsyncGroup) group).rdma() != this) {
            throw new IllegalChannelGroupException();
        }
        return (AsyncGroup) group;
    }

    @Override
    public AsynchronousChannelGroup openAsynchronousChannelGroup(int nThreads, ThreadFactory threadFactory)
            throws IOException {
        return new AsyncGroup(this, jdk.openAsynchronousChannelGroup(nThreads, threadFactory));
    }

    @Override
    public AsynchronousChannelGroup openAsynchronousChannelGroup(ExecutorService executor, int initialSize)
            throws IOException {
        return new AsyncGroup(this, jdk.openAsynchronousChannelGroup(executor, initialSize));
    }

    @Override
    public AsynchronousServerSocketChannel openAsynchronousServerSocketChannel(AsynchronousChannelGroup group)
            throws IOException {
        return new RdmaAsynchronousServerSocketChannel(group(group));
    }

    @Override
    public AsynchronousSocketChannel openAsynchronousSocketChannel(AsynchronousChannelGroup group)
            throws IOException {
        return new RdmaAsynchronousSocketChannel(group(group));
    }
}
