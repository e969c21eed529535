package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.EngineConfig;
import io.rdmanio.core.engine.Engines;
import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.selector.RdmaSelectorProvider;
import io.rdmanio.selector.config.RdmanioConfig;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Closes with unsent data to a peer that never reads: what they hold is bounded while they linger, and everything
 * comes back once the peer is gone. Run against the JDK's TCP (the reference: the kernel holds such data without
 * a descriptor) and against shm with the peer in a second JVM, where a lingering connection holds its descriptor
 * and its registered memory, bounded by {@code rdmanio.lingerMaxBytes}.
 */
@Timeout(value = 180)
class LingeringCloseResourcesTest {

    private static final int CONNECTIONS = 60;
    private static final long LINGER_MAX_BYTES = 64L << 20;

    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"tcp", "shm"})
    void closesWithUnsentDataAreBoundedAndFreedWhenThePeerExits(String transport) throws Exception {
        boolean onShm = transport.equals("shm");
        Path dir = ShmNio.newDirectory();
        Fabric fabric = null;
        Engine engine = null;
        try {
            SelectorProvider provider;
            if (onShm) {
                fabric = Fabrics.open("shm", Map.of("shm.dir", dir.toString()));
                Engine e = Engines.open(fabric, EngineConfig.DEFAULT.withSlotSize(fabric.preferredSlotSize())
                    .withLingerMaxBytes(LINGER_MAX_BYTES));
                engine = e;
                provider = new RdmaSelectorProvider(new RdmanioConfig(
                    ShmNio.router(a -> a.getAddress().isLoopbackAddress()), (peer, listening) -> e, "shm", null));
            } else {
                provider = SelectorProvider.provider();
            }
            PeerJvm peer = onShm
                ? PeerJvm.start(dir, PeerJvm.rules(tmp), null, HoldingServerMain.class)
                : PeerJvm.start(List.of(), System.getProperty("java.class.path"), dir,
                    Files.writeString(tmp.resolve("tcp.rules"), "# no rule: every socket on the JDK's TCP\n"),
                    null, HoldingServerMain.class);
            try {
                InetSocketAddress server = new InetSocketAddress("127.0.0.1",
                    Integer.parseInt(peer.expect("PORT ").substring(5)));
                // One connection first, so that what the fabric sets up once (its watcher, the pool's retained
                // chunks) is in the baseline.
                SocketChannel first = provider.openSocketChannel();
                first.connect(server);
                first.close();
                Engine counted = engine;
                awaitAtMost(() -> counted == null ? 0 : invoke(counted, "connectionCount"), 0,
                    "the first connection torn down");
                long fds = ShmNio.openDescriptors();
                long mapped = mappedBytes(dir);
                for (int i = 0; i < CONNECTIONS; i++) {
                    fill(provider, server).close();
                }
                if (onShm) {
                    // Unbounded, the closed connections would hold about 4 MiB each; chunks shared with a reset
                    // connection's neighbours may outlive it, hence twice the bound.
                    awaitAtMost(() -> invoke(counted, "registeredBytes"), 2 * LINGER_MAX_BYTES,
                        "registered memory of closed connections bounded by rdmanio.lingerMaxBytes");
                }
                long lingeringFds = ShmNio.openDescriptors();
                long lingeringMapped = mappedBytes(dir);
                long lingeringRegistered = onShm ? invoke(counted, "registeredBytes") : 0;
                peer.close();
                awaitAtMost(ShmNio::openDescriptors, fds, "descriptors back to the baseline of " + fds
                    + " after the peer exited (" + lingeringFds + " while it held the connections)");
                awaitAtMost(() -> mappedBytes(dir), mapped, "shm mappings back to the baseline of " + mapped
                    + " bytes");
                if (onShm) {
                    assertEquals(0, invoke(counted, "connectionCount"), "connections left");
                    assertEquals(List.of(), ShmNio.entriesOf(dir).stream()
                        .filter(n -> !(n.startsWith("l-") && n.endsWith(".sock")) && !n.equals(".bind.lock"))
                        .toList(), "files left in the shm directory");
                }
                System.out.println(transport + ": " + CONNECTIONS + " closes with unsent data: " + lingeringFds
                    + " descriptors, " + (lingeringRegistered >> 20) + " MiB registered by this engine and "
                    + (lingeringMapped >> 20) + " MiB of shm mappings (the peer's receive rings among them) while the"
                    + " peer held them;"
                    + " baseline and after its exit: " + fds + " and " + (mapped >> 20) + " MiB");
            } finally {
                peer.close();
            }
        } finally {
            if (engine != null) {
                engine.close();
            }
            if (fabric != null) {
                fabric.close();
            }
            ShmNio.deleteDirectory(dir);
        }
    }

    /** A connection to {@code server} with as many bytes written as it takes without the peer reading. */
    private static SocketChannel fill(SelectorProvider provider, InetSocketAddress server) throws IOException {
        SocketChannel c = provider.openSocketChannel();
        c.connect(server);
        c.configureBlocking(false);
        ByteBuffer b = ByteBuffer.allocate(256 << 10);
        // The peer's window first, then this end's send buffer: the first write that takes nothing ends it.
        for (int i = 0; i < 1000 && c.write(b.clear()) > 0; i++) {
            // fill
        }
        return c;
    }

    private static long invoke(Engine engine, String name) {
        try {
            Method m = engine.getClass().getDeclaredMethod(name);
            m.setAccessible(true);
            return ((Number) m.invoke(engine)).longValue();
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("the engine has no " + name + "()", e);
        }
    }

    private interface Measure {
        long get() throws IOException;
    }

    /** Waits (bounded) until {@code measure} is at most {@code limit}; a collection runs between tries. */
    private static void awaitAtMost(Measure measure, long limit, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ShmNio.TIMEOUT_SECONDS * 3);
        long v;
        while ((v = measure.get()) > limit) {
            if (System.nanoTime() - deadline > 0) {
                fail(what + ": still " + v + " after " + ShmNio.TIMEOUT_SECONDS * 3 + " s");
            }
            // Mappings of freed memory go with their buffers, at a collection.
            System.gc();
            Thread.sleep(50);
        }
        assertTrue(v <= limit);
    }

    /** Bytes of this process's mappings of files in {@code dir} (deleted or not). */
    /**
     * Bytes of shared memory mapped here: plain files of the shm directory, and rdmanio's sealed memfds (this
     * process's and its peers'), which carry no path in the directory.
     */
    private static long mappedBytes(Path dir) throws IOException {
        long total = 0;
        for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
            if (line.contains(dir.toString()) || line.contains("/memfd:rdmanio-")) {
                String[] range = line.substring(0, line.indexOf(' ')).split("-");
                total += Long.parseUnsignedLong(range[1], 16) - Long.parseUnsignedLong(range[0], 16);
            }
        }
        return total;
    }
}
