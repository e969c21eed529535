package io.rdmanio.selector.async;

import io.rdmanio.core.Logs;
import java.io.IOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.spi.SelectorProvider;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.Logger;

/**
 * The thread that waits for a group's fabric channels: one rdmanio {@link Selector}, whose keys carry a
 * {@link Ready} callback, and a queue of tasks (interest changes, registrations) run between selects. Idle, it is
 * parked in its selector as any selector thread is; it runs no completion handler itself (the group's threads do).
 * Thread-safe: {@link #submit} from any thread.
 */
final class AsyncPoller implements Runnable {

    private static final Logger LOG = Logs.get(AsyncPoller.class);

    /** What a key's channel does when the selector reports it ready; runs on the poller thread. */
    interface Ready {
        void ready(SelectionKey key);
    }

    private final Selector selector;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean stopped;

    AsyncPoller(SelectorProvider provider, String name) throws IOException {
        selector = provider.openSelector();
        thread = new Thread(this, name);
        thread.setDaemon(true);
        thread.start();
    }

    Selector selector() {
        return selector;
    }

    /** Runs {@code task} on the poller thread, soon. */
    void submit(Runnable task) {
        tasks.add(task);
        selector.wakeup();
    }

    void stop() {
        stopped = true;
        selector.wakeup();
    }

    /** One channel's failure is its own: it never stops the thread that serves the others. */
    private static void guarded(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            LOG.warn("rdmanio: an asynchronous channel's callback failed: {}", e.toString(), e);
        }
    }

    @Override
    public void run() {
        try {
            while (!stopped) {
                selector.select(key -> {
                    if (key.isValid()) {
                        guarded(() -> ((Ready) key.attachment()).ready(key));
                    }
                });
                Runnable task;
                while ((task = tasks.poll()) != null) {
                    guarded(task);
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            // The selector failed: channels left waiting are failed by their close; nothing else to do here.
        } finally {
            try {
                selector.close();
            } catch (IOException ignore) {
                // closing: nothing to report
            }
        }
    }
}
