package io.rdmanio.selector.async;

import java.io.IOException;
import java.nio.channels.AsynchronousChannelGroup;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.Channel;
import java.nio.channels.ShutdownChannelGroupException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * rdmanio's {@link AsynchronousChannelGroup}: the JDK's own group, for the channels the rules leave on TCP, and for
 * fabric channels a {@link AsyncPoller} thread (started with the first one) whose completions run on the JDK
 * group's threads, as the JDK's own completions do. The default group (channels opened without one) uses the JDK's
 * default group and a cached pool of daemon threads for fabric completions.
 *
 * <p>The JDK group cannot see fabric channels, so the group holds one JDK channel of its own (the keeper) open
 * while it is not shut down or any fabric channel is open: a shut-down group terminates only once those are
 * closed and their handlers have run, as the specification says. Thread-safe.
 */
final class AsyncGroup extends AsynchronousChannelGroup {

    private static final AtomicInteger POLLERS = new AtomicInteger();

    private final RdmaAsynchronousChannelProvider provider;
    /** The JDK's group; null for the default group (the JDK's default group then). */
    private final AsynchronousChannelGroup jdkGroup;
    private final Executor handlers;
    private final Set<Channel> fabricChannels = ConcurrentHashMap.newKeySet();
    private final Object lock = new Object();
    private AsyncPoller poller;
    private AsynchronousSocketChannel keeper;
    private volatile boolean shutdown;
    /** shutdownNow is closing every channel: readiness is no longer acted on, so what waits fails with the close. */
    private volatile boolean closingAll;

    AsyncGroup(RdmaAsynchronousChannelProvider provider, AsynchronousChannelGroup jdkGroup) throws IOException {
        super(provider);
        this.provider = provider;
        this.jdkGroup = jdkGroup;
        if (jdkGroup == null) {
            handlers = defaultPool();
        } else {
            // The JDK's group implementation runs tasks on its threads (it is an Executor).
            handlers = (Executor) jdkGroup;
            keeper = provider.jdk().openAsynchronousSocketChannel(jdkGroup);
        }
    }

    private static ExecutorService defaultPool() {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
            new SynchronousQueue<>(), r -> {
                Thread t = new Thread(r, "rdmanio-async-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        return pool;
    }

    /** Whether {@link #shutdownNow} is closing every channel (the poller then leaves readiness alone). */
    boolean closingAll() {
        return closingAll;
    }

    /** The JDK group the channels left on TCP are opened in; null for the JDK's default group. */
    AsynchronousChannelGroup jdkGroup() {
        return jdkGroup;
    }

    RdmaAsynchronousChannelProvider rdma() {
        return provider;
    }

    /** Runs a completion handler on the group's threads (on the caller's if the group can take no more). */
    void execute(Runnable task) {
        try {
            handlers.execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    /** Admits a fabric channel, starting the poller with the first. */
    AsyncPoller admit(Channel channel) throws IOException {
        synchronized (lock) {
            if (shutdown) {
                throw new ShutdownChannelGroupException();
            }
            if (poller == null) {
                poller = new AsyncPoller(provider.selectors(), "rdmanio-async-poller-" + POLLERS.incrementAndGet());
            }
            fabricChannels.add(channel);
            return poller;
        }
    }

    /** A fabric channel closed: the last one of a shut-down group lets it terminate. */
    void closed(Channel channel) {
        fabricChannels.remove(channel);
        maybeTerminate();
    }

    private void maybeTerminate() {
        AsyncPoller p = null;
        AsynchronousSocketChannel k = null;
        synchronized (lock) {
            if (shutdown && fabricChannels.isEmpty()) {
                p = poller;
                poller = null;
                k = keeper;
                keeper = null;
            }
        }
        if (p != null) {
            p.stop();
        }
        if (k != null) {
            try {
                k.close();
            } catch (IOException ignore) {
                // A JDK channel that was never connected: nothing to report.
            }
        }
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        if (!shutdown) {
            return false;
        }
        synchronized (lock) {
            if (!fabricChannels.isEmpty() || poller != null) {
                return false;
            }
        }
        return jdkGroup == null || jdkGroup.isTerminated();
    }

    @Override
    public void shutdown() {
        if (jdkGroup == null) {
            throw new UnsupportedOperationException("the default group cannot be shut down");
        }
        shutdown = true;
        jdkGroup.shutdown();
        maybeTerminate();
    }

    @Override
    public void shutdownNow() throws IOException {
        if (jdkGroup == null) {
            throw new UnsupportedOperationException("the default group cannot be shut down");
        }
        shutdown = true;
        // Set before the first close: closing one end sends its peer (often in this group) a FIN, which the
        // poller would otherwise hand to a waiting read as -1 before that channel's own close failed it.
        closingAll = true;
        for (Channel c : fabricChannels) {
            c.close();
        }
        maybeTerminate();
        jdkGroup.shutdownNow();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        if (jdkGroup != null && !jdkGroup.awaitTermination(timeout, unit)) {
            return false;
        }
        while (!isTerminated()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            // The JDK group has terminated, so the keeper is closed: what remains is the poller stopping.
            TimeUnit.MILLISECONDS.sleep(Math.min(10, Math.max(1, TimeUnit.NANOSECONDS.toMillis(left))));
        }
        return true;
    }
}
