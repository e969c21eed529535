package io.rdmanio.selector.async;

import io.rdmanio.selector.config.RunStats;
import java.net.SocketAddress;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.CompletionHandler;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The JDK's asynchronous connect and accept for channels left on TCP, counted in the run's statistics as TCP
 * connections when they succeed; nothing else about them changes (the handler runs where the JDK runs it, the
 * future is the JDK's behind a counting view). Stateless; thread-safe.
 */
final class TcpCounting {

    private TcpCounting() {
    }

    static <A> Future<Void> connect(AsynchronousSocketChannel jdk, SocketAddress remote, A attachment,
                                    CompletionHandler<Void, ? super A> handler) {
        if (handler == null) {
            return new Counted<>(jdk.connect(remote));
        }
        jdk.connect(remote, attachment, counted(handler));
        return null;
    }

    static <A> Future<AsynchronousSocketChannel> accept(AsynchronousServerSocketChannel jdk, A attachment,
            CompletionHandler<AsynchronousSocketChannel, ? super A> handler) {
        if (handler == null) {
            return new Counted<>(jdk.accept());
        }
        jdk.accept(attachment, counted(handler));
        return null;
    }

    private static <V, A> CompletionHandler<V, A> counted(CompletionHandler<V, ? super A> handler) {
        return new CompletionHandler<>() {
            @Override
            public void completed(V result, A attachment) {
                RunStats.get().connectionOpened(false);
                handler.completed(result, attachment);
            }

            @Override
            public void failed(Throwable exc, A attachment) {
                handler.failed(exc, attachment);
            }
        };
    }

    /** The JDK's future; the first successful {@code get} counts the connection. */
    private static final class Counted<V> implements Future<V> {
        private final Future<V> jdk;
        private final AtomicBoolean counted = new AtomicBoolean();

        Counted(Future<V> jdk) {
            this.jdk = jdk;
        }

        private V count(V v) {
            if (counted.compareAndSet(false, true)) {
                RunStats.get().connectionOpened(false);
            }
            return v;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            return jdk.cancel(mayInterruptIfRunning);
        }

        @Override
        public boolean isCancelled() {
            return jdk.isCancelled();
        }

        @Override
        public boolean isDone() {
            return jdk.isDone();
        }

        @Override
        public V get() throws InterruptedException, ExecutionException {
            return count(jdk.get());
        }

        @Override
        public V get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
            return count(jdk.get(timeout, unit));
        }
    }
}
