package io.rdmanio.selector.async;

import java.nio.ByteBuffer;
import java.nio.channels.CompletionHandler;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One pending asynchronous operation of a fabric channel: whom to tell (a completion handler and its attachment,
 * or the {@link Future} returned), its buffers, and its timer. Completed exactly once, by whoever takes it from
 * its channel's slot first (the poller, the timer, a cancel or a close).
 *
 * @param <V> the result type
 */
final class Op<V> {

    /** Cancels an operation that is still pending; returns whether it was. */
    interface Canceller {
        boolean cancel(Op<?> op, boolean mayInterruptIfRunning);
    }

    /** The {@code Future} form: a cancel reaches the channel, as the JDK's {@code PendingFuture} does. */
    static final class Future<V> extends CompletableFuture<V> {
        private volatile Op<V> op;
        private volatile Canceller canceller;

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            Op<V> o = op;
            Canceller c = canceller;
            if (o == null || c == null || isDone()) {
                return false;
            }
            // The channel marks the direction killed (and closes itself when asked) before the future says so.
            return c.cancel(o, mayInterruptIfRunning) && super.cancel(mayInterruptIfRunning);
        }

        // As the JDK's pending futures: a cancelled operation's get throws a CancellationException without a
        // message (CompletableFuture's own says "get" on recent JDKs).
        @Override
        public V get() throws InterruptedException, ExecutionException {
            try {
                return super.get();
            } catch (CancellationException e) {
                throw new CancellationException();
            }
        }

        @Override
        public V get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
            try {
                return super.get(timeout, unit);
            } catch (CancellationException e) {
                throw new CancellationException();
            }
        }
    }

    final CompletionHandler<V, Object> handler;
    final Object attachment;
    final Future<V> future;
    ByteBuffer buffer;
    ByteBuffer[] buffers;
    int offset;
    int length;
    volatile ScheduledFuture<?> timer;

    @SuppressWarnings("unchecked")
    <A> Op(A attachment, CompletionHandler<V, ? super A> handler, Canceller canceller) {
        this.handler = (CompletionHandler<V, Object>) handler;
        this.attachment = attachment;
        if (handler == null) {
            future = new Future<>();
            future.op = this;
            future.canceller = canceller;
        } else {
            future = null;
        }
    }

    boolean scattering() {
        return buffers != null;
    }

    /** Tells the result: a handler on the group's threads, a future at once. */
    void complete(AsyncGroup group, V value, Throwable failure) {
        ScheduledFuture<?> t = timer;
        if (t != null) {
            t.cancel(false);
        }
        if (future != null) {
            if (failure != null) {
                future.completeExceptionally(failure);
            } else {
                future.complete(value);
            }
            return;
        }
        group.execute(() -> {
            if (failure != null) {
                handler.failed(failure, attachment);
            } else {
                handler.completed(value, attachment);
            }
        });
    }
}
