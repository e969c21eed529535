package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * 10^4 connect/echo/close cycles through the NIO API across processes: this JVM connects on rdmanio's provider,
 * an unmodified NIO server in a second JVM (activated by property, {@code fabric=shm}) accepts. Descriptors of
 * both processes, this process's mappings of shm files, and the shm directory's entries are compared before
 * and after.
 */
@Timeout(value = 240)
class ShmLeakTest {

    private static final int WARM_UP = 300;
    private static final int CYCLES = 10_000;
    /** Descriptors a JVM may open on its own meanwhile (a jar, a log); a leak of one per cycle is thousands. */
    private static final int DESCRIPTOR_SLACK = 4;

    @TempDir
    Path tmp;

    @Test
    void tenThousandConnectCloseCyclesLeaveNothingBehind() throws Exception {
        try (ShmNio shm = ShmNio.open(); PeerJvm peer = PeerJvm.peer(shm.dir, PeerJvm.rules(tmp))) {
            InetSocketAddress at = new InetSocketAddress("127.0.0.1",
                Integer.parseInt(peer.ask("listen", "PORT ").substring(5)));
            peer.ask("serve", "SERVING");
            cycles(shm, peer, at, WARM_UP);
            settle(shm);
            int fdsBefore = ShmNio.openDescriptors();
            int peerFdsBefore = peerDescriptors(peer);
            long mapsBefore = shmMappings(shm.dir);
            List<String> entriesBefore = shm.entries();

            long t0 = System.nanoTime();
            cycles(shm, peer, at, CYCLES);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);

            long deadline = System.nanoTime() + ShmNio.TIMEOUT_NANOS;
            int fdsAfter;
            int peerFdsAfter;
            long mapsAfter;
            while (true) {
                settle(shm);
                fdsAfter = ShmNio.openDescriptors();
                peerFdsAfter = peerDescriptors(peer);
                mapsAfter = shmMappings(shm.dir);
                if (fdsAfter <= fdsBefore + DESCRIPTOR_SLACK && peerFdsAfter <= peerFdsBefore + DESCRIPTOR_SLACK
                    && mapsAfter <= mapsBefore + 8 || System.nanoTime() - deadline > 0) {
                    break;
                }
                Thread.sleep(100);
            }
            System.out.println(CYCLES + " cross-process connect/echo/close cycles in " + ms + " ms; descriptors here "
                + fdsBefore + " -> " + fdsAfter + ", in the peer " + peerFdsBefore + " -> " + peerFdsAfter
                + ", mappings of shm files here " + mapsBefore + " -> " + mapsAfter + ", directory " + entriesBefore
                + " -> " + shm.entries());
            assertFalse(peer.output().contains("SERVE-FAILED"), "a connection failed in the server: " + peer.output());
            assertTrue(fdsAfter <= fdsBefore + DESCRIPTOR_SLACK, "descriptors leaked here");
            assertTrue(peerFdsAfter <= peerFdsBefore + DESCRIPTOR_SLACK, "descriptors leaked in the peer");
            assertTrue(mapsAfter <= mapsBefore + 8, "mappings of shm files leaked here");
            assertEquals(entriesBefore, shm.entries(), "the shm directory holds what it held before");
        }
    }

    private static void cycles(ShmNio shm, PeerJvm peer, InetSocketAddress at, int n) throws Exception {
        ByteBuffer one = ByteBuffer.allocate(1);
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            try (SocketChannel c = shm.provider.openSocketChannel(); Selector sel = shm.provider.openSelector()) {
                // Non-blocking connect with a bounded wait, so a connect that never completes is reported.
                c.configureBlocking(false);
                SelectionKey key = c.register(sel, SelectionKey.OP_CONNECT);
                long deadline = System.nanoTime() + ShmNio.TIMEOUT_NANOS;
                boolean connected = c.connect(at);
                while (!connected) {
                    if (System.nanoTime() - deadline > 0) {
                        fail("cycle " + i + " of " + n + ": the connect did not complete within "
                            + ShmNio.TIMEOUT_SECONDS + " s; the peer printed:\n" + peer.output() + "\nthe peer's threads:\n"
                            + peer.threadDump());
                    }
                    sel.select(1000);
                    connected = c.finishConnect();
                }
                key.interestOps(SelectionKey.OP_READ);
                c.write(ByteBuffer.wrap(new byte[] {(byte) i}));
                one.clear();
                int r;
                while ((r = c.read(one)) == 0) {
                    if (System.nanoTime() - deadline > 0) {
                        fail("cycle " + i + " of " + n + ": no echo within " + ShmNio.TIMEOUT_SECONDS
                            + " s; this JVM's threads:\n" + ShmNio.threadDump() + "\nthe peer's threads:\n"
                            + peer.threadDump());
                    }
                    sel.select(1000);
                }
                if (r != 1 || one.get(0) != (byte) i) {
                    fail("cycle " + i + ": no echo, read gave " + r);
                }
            }
            if ((i + 1) % 2000 == 0) {
                System.out.println((i + 1) + " cycles, " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms");
            }
        }
    }

    /** Lets closed connections finish tearing down and unreachable mappings be released. */
    private static void settle(ShmNio shm) throws IOException, InterruptedException {
        System.gc();
        // A selector pass drives any progress still owed to closed connections.
        try (var sel = shm.provider.openSelector()) {
            sel.select(50);
        }
    }

    private static int peerDescriptors(PeerJvm peer) throws Exception {
        return Integer.parseInt(peer.ask("fds", "FDS ").substring(4));
    }

    /** Lines of /proc/self/maps naming a file of {@code dir} (mapped regions and rings, unlinked or not). */
    private static long shmMappings(Path dir) throws IOException {
        try (Stream<String> lines = Files.lines(Path.of("/proc/self/maps"))) {
            return lines.filter(l -> l.contains(dir.toString())).count();
        }
    }
}
