package io.rdmanio.core.fabric.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.fabric.QueuePair;
import io.rdmanio.core.testsupport.CompletionWaits;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/** Shared helpers of the shm tests: a private shm directory per test, and waiting with a deadline. */
final class ShmTestSupport {

    static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(20);

    private ShmTestSupport() {
    }

    /** A fresh shm directory (mode 0700) of a short path, for one test. */
    static Path newDirectory() throws IOException {
        Path dir = Path.of("/dev/shm/rdmanio-t-" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        return dir;
    }

    static void deleteDirectory(Path dir) throws IOException {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    // best effort
                }
            });
        }
    }

    static ShmFabric open(Path dir) throws IOException {
        return (ShmFabric) Fabrics.open("shm", Map.of(ShmFabricProvider.DIR, dir.toString()));
    }

    /** The next event of {@code channel}, which must be of {@code type}. */
    static CmEvent expect(EventChannel channel, CmEvent.Type type) throws IOException {
        CmEvent event = next(channel);
        assertEquals(type, event.type(), () -> "unexpected event " + event);
        return event;
    }

    static CmEvent next(EventChannel channel) throws IOException {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        while (true) {
            CmEvent event = channel.poll();
            if (event != null) {
                return event;
            }
            if (System.nanoTime() - deadline > 0) {
                fail("no connection-manager event within the timeout");
            }
            LockSupport.parkNanos(100_000);
        }
    }

    /** Polls until exactly {@code n} more completions arrived (in {@code out}'s arrays from index 0). */
    static void pollExactly(CompletionQueue cq, Completions out, int n) throws IOException {
        Completions batch = new Completions(Math.max(1, n));
        int got = 0;
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        while (got < n) {
            int k = cq.poll(batch);
            for (int i = 0; i < k; i++, got++) {
                if (got >= out.capacity()) {
                    fail("more completions than expected");
                }
                CompletionWaits.copy(batch, i, out, got);
            }
            if (got < n) {
                if (System.nanoTime() - deadline > 0) {
                    fail("only " + got + " of " + n + " completions arrived within the timeout");
                }
                LockSupport.parkNanos(50_000);
            }
        }
        out.count(got);
    }

    /** Number of open descriptors of this process. */
    static int openDescriptors() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return (int) fds.count();
        }
    }

    static int entries(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return (int) files.count();
        }
    }

    /** A REQUEST's body as a client of {@code fabric} writes it, with the addresses given (for tests of raw peers). */
    static ByteBuffer request(ShmFabric fabric, String source, String target, int targetPort) {
        return request(fabric, source, target, targetPort, ByteBuffer.allocate(0));
    }

    /** {@link #request} carrying {@code data} as its private data (an engine's handshake, say). */
    static ByteBuffer request(ShmFabric fabric, String source, String target, int targetPort, ByteBuffer data) {
        ByteBuffer b = ByteBuffer.allocate(1024);
        b.putInt(ShmCmId.MAGIC).putInt(ShmCmId.VERSION);
        ShmLink.putString(b, fabric.bootId);
        b.putLong(fabric.dirDevice).putLong(fabric.dirInode).putInt(fabric.uid);
        b.putLong(fabric.pid).putLong(fabric.nonce).putInt(fabric.directoryFd()).putLong(fabric.directoryInode());
        b.putInt(64);
        ShmLink.putString(b, source);
        b.putInt(45000);
        ShmLink.putString(b, target);
        b.putInt(targetPort);
        ShmLink.putBytes(b, data);
        return b.flip();
    }

    /** A message of {@code type} on a rendezvous connection, as {@link ShmLink} frames it. */
    static ByteBuffer frame(byte type, ByteBuffer body) {
        ByteBuffer f = ByteBuffer.allocate(3 + body.remaining());
        return f.put(type).putShort((short) body.remaining()).put(body.duplicate()).flip();
    }

    /**
     * A fresh id of {@code fabric} with a small queue pair, connecting to {@code to}; its events go to
     * {@code events}.
     */
    static CmId connecting(ShmFabric fabric, EventChannel events, InetSocketAddress to) throws IOException {
        CompletionQueue cq = fabric.createCompletionQueue(8);
        CmId id = fabric.createId(events);
        id.createQueuePair(new QueuePair.Config(cq, cq, 4, 4, 64));
        id.connect(to, null);
        return id;
    }
}
