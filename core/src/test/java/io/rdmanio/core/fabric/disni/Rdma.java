package io.rdmanio.core.fabric.disni;

import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.testsupport.CompletionWaits;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Test support for the disni fabric: skips a test where no usable RDMA device exists (with the provider's reason),
 * and waits for events and completions through the fabric's own notification, never by sleeping.
 */
final class Rdma {

    static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private Rdma() {
    }

    /** Skips the calling test unless the disni fabric can open here. */
    static void assumeDevice() {
        String reason = new DisniFabricProvider().unavailableReason();
        Assumptions.assumeTrue(reason == null, () -> "the disni fabric is unavailable here: " + reason);
    }

    static ByteBuffer text(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.US_ASCII));
    }

    static String text(ByteBuffer b) {
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    /** The next event of {@code type} on {@code channel}; fails on another type or after the timeout. */
    static CmEvent await(EventChannel channel, CmEvent.Type type) throws IOException, InterruptedException {
        CmEvent e = next(channel);
        if (e.type() != type) {
            fail("expected " + type + " but got " + e.type() + " (" + e.reason() + ")");
        }
        return e;
    }

    /** The next event on {@code channel}, waiting through its notifier. */
    static CmEvent next(EventChannel channel) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        Semaphore signal = new Semaphore(0);
        for (;;) {
            CmEvent e = channel.poll();
            if (e != null) {
                return e;
            }
            channel.requestNotify(signal::release);
            long left = deadline - System.nanoTime();
            if (left <= 0 || !signal.tryAcquire(left, TimeUnit.NANOSECONDS)) {
                fail("no connection-manager event within " + TimeUnit.NANOSECONDS.toSeconds(TIMEOUT_NANOS) + " s");
            }
        }
    }

    /** Polls until exactly {@code n} completions arrived, waiting through the queue's notifier. */
    static Completions awaitCompletions(CompletionQueue cq, int n) throws IOException, InterruptedException {
        return CompletionWaits.awaitExactly(cq, n, TIMEOUT_NANOS);
    }
}
