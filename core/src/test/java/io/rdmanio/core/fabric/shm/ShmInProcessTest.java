package io.rdmanio.core.fabric.shm;

import static io.rdmanio.core.fabric.shm.ShmTestSupport.pollExactly;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The shm fabric with both ends in this JVM (two fabrics on one directory): what is its own (availability, binding
 * over stale sockets, inline sends, local-only registration, queue depth, the doorbell, file modes, users and
 * hosts). What every fabric must do is in {@link ShmSpiConformanceTest}.
 */
class ShmInProcessTest extends WithShmDirectory {

    @Test
    void providerIsFoundAndAvailable() throws IOException {
        assertTrue(Fabrics.names().contains("shm"));
        assertEquals(null, new ShmFabricProvider().unavailableReason(Map.of(ShmFabricProvider.DIR, dir.toString())));
        String reason = new ShmFabricProvider().unavailableReason(Map.of(ShmFabricProvider.DIR, "/proc/1/rdmanio"));
        assertNotNull(reason);
        assertTrue(reason.contains("/proc/1/rdmanio") && reason.contains("rdmanio.shm.dir"), reason);
        Path missing = dir.resolve("not-yet");
        assertEquals(null, new ShmFabricProvider().unavailableReason(Map.of(ShmFabricProvider.DIR, missing.toString())));
        assertFalse(Files.exists(missing), "checking availability creates nothing");
        String tooLong = new ShmFabricProvider().unavailableReason(
            Map.of(ShmFabricProvider.DIR, "/dev/shm/" + "x".repeat(60)));
        assertTrue(tooLong.contains("UNIX socket"), tooLong);
        IOException noGroup = assertThrows(IOException.class, () -> Fabrics.open("shm",
            Map.of(ShmFabricProvider.DIR, dir.toString(), ShmFabricProvider.GROUP, "no-such-group-xyz")));
        assertTrue(noGroup.getMessage().contains("no-such-group-xyz"), noGroup.getMessage());
    }

    @Test
    void prefersLargeSlotsBecauseItsMemoryIsBackedOnlyWhereWritten() throws IOException {
        try (ShmFabric fabric = ShmTestSupport.open(dir)) {
            assertEquals(65536, fabric.preferredSlotSize());
        }
    }

    @Test
    void theJdkAndTheProcFdScanNameTheSameDescriptor() throws IOException {
        // The tests run with sun.nio.ch exported, as rdmanio's provider requires: the fast path is the one taken.
        assertTrue(ShmHost.asksTheJdk(), "sun.nio.ch.IOUtil.fdVal is not callable here");
        Path p = dir.resolve("probe");
        Files.createFile(p);
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(p.toFile(), "rw")) {
            int asked = ShmHost.descriptorOf(f.getFD(), p);
            assertTrue(asked > 2, "a descriptor of a file just opened: " + asked);
            assertEquals(ShmHost.descriptorOf(p), asked);
        } finally {
            Files.delete(p);
        }
    }

    @Test
    void bindingALiveAddressFailsAndAStaleSocketIsReplaced() throws IOException {
        try (ShmFabric a = ShmTestSupport.open(dir); ShmFabric b = ShmTestSupport.open(dir)) {
            CmId first = a.createId(a.createEventChannel());
            first.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            first.listen(4);
            InetSocketAddress address = first.localAddress();
            CmId second = b.createId(b.createEventChannel());
            BindException e = assertThrows(BindException.class, () -> second.bind(address));
            assertTrue(e.getMessage().contains(address.toString()), e.getMessage());
            first.close();
            second.bind(address);
            second.close();
            // A socket file whose process is gone: bound, then closed without unlinking, as a crash leaves it.
            Path stale = a.rendezvousPath(address);
            try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                dead.bind(UnixDomainSocketAddress.of(stale));
            }
            assertTrue(Files.exists(stale));
            CmId third = b.createId(b.createEventChannel());
            third.bind(address);
            third.listen(4);
            third.close();
            assertFalse(Files.exists(stale), "a listener removes its socket file on close");
        }
    }

    @Test
    void inlineSendGatheredFromUnregisteredMemoryArrivesByteExact() throws IOException {
        try (ShmPair pair = ShmPair.connected(dir, 8, 2, 256)) {
            ByteBuffer head = ByteBuffer.allocate(24);
            ByteBuffer body = ByteBuffer.allocateDirect(64);
            for (int i = 0; i < 24; i++) {
                head.put(i, (byte) (100 + i));
            }
            for (int i = 0; i < 64; i++) {
                body.put(i, (byte) (i * 3));
            }
            // 24 + 40 = 64 bytes, the client queue pair's maxInlineData.
            pair.clientQp.postSendInline(5, head, 0, 24, body, 20, 40, QueuePair.SIGNALED);
            body.put(20, (byte) 1);
            Completions out = new Completions(8);
            pollExactly(pair.clientSendCq, out, 1);
            assertEquals(Completions.SUCCESS, out.status[0]);
            assertEquals(Completions.OP_SEND, out.opcode[0]);
            assertEquals(64, out.byteLen[0]);
            pollExactly(pair.serverRecvCq, out, 1);
            assertEquals(Completions.SUCCESS, out.status[0]);
            assertEquals(64, out.byteLen[0]);
            ByteBuffer got = pair.serverMr.buffer();
            for (int i = 0; i < 24; i++) {
                assertEquals((byte) (100 + i), got.get(i));
            }
            for (int i = 0; i < 40; i++) {
                assertEquals((byte) ((20 + i) * 3), got.get(24 + i), "copied at post time");
            }
            FabricException tooLong = assertThrows(FabricException.class,
                () -> pair.clientQp.postSendInline(6, head, 0, 24, body, 0, 41, 0));
            assertTrue(tooLong.getMessage().contains("maxInlineData is 64"), tooLong.getMessage());
            FabricException outside = assertThrows(FabricException.class,
                () -> pair.clientQp.postSendInline(7, head, 0, 24, body, 60, 5, 0));
            assertTrue(outside.getMessage().contains("the body [60, 60 + 5) is not inside"), outside.getMessage());
            assertEquals(65536 * 16, pair.clientFabric.maxInlineData(), "1 MiB: every send is copied at post time");
        }
    }

    @Test
    void registeredMemoryIsLocalOnly() throws IOException {
        try (ShmPair pair = ShmPair.connected(dir, 8, 1, 64)) {
            FabricException remote = assertThrows(FabricException.class,
                () -> pair.clientFabric.register(ByteBuffer.allocateDirect(64), ShmPair.ACCESS));
            assertTrue(remote.getMessage().contains("Fabric.allocate"), remote.getMessage());
            MemoryRegion local = pair.clientFabric.register(ByteBuffer.allocateDirect(64), MemoryRegion.LOCAL_WRITE);
            FabricException recv = assertThrows(FabricException.class,
                () -> pair.clientQp.postRecv(1, local, 0, 64));
            assertTrue(recv.getMessage().contains("Fabric.allocate"), recv.getMessage());
            // As the source of a send it is fine.
            local.buffer().put(0, (byte) 42);
            pair.clientQp.postSend(2, local, 0, 1, QueuePair.SIGNALED);
            Completions out = new Completions(4);
            pollExactly(pair.clientSendCq, out, 1);
            assertEquals(Completions.SUCCESS, out.status[0]);
            pollExactly(pair.serverRecvCq, out, 1);
            assertEquals(42, pair.serverMr.buffer().get(0));
        }
    }

    @Test
    void sendQueueDepthIsEnforcedUntilCompletionsArePolled() throws IOException {
        try (ShmPair pair = ShmPair.connected(dir, 4, 4, 64)) {
            for (int i = 0; i < 4; i++) {
                pair.clientQp.postSend(i, pair.clientMr, 0, 8, QueuePair.SIGNALED);
            }
            FabricException full = assertThrows(FabricException.class,
                () -> pair.clientQp.postSend(9, pair.clientMr, 0, 8, QueuePair.SIGNALED));
            assertTrue(full.getMessage().contains("send queue full"), full.getMessage());
            Completions out = new Completions(8);
            pollExactly(pair.clientSendCq, out, 4);
            pollExactly(pair.serverRecvCq, out, 4);
            pair.serverQp.postRecv(50, pair.serverMr, 0, 64);
            pair.clientQp.postSend(10, pair.clientMr, 0, 8, QueuePair.SIGNALED);
        }
    }

    @Test
    void armedQueueIsWokenByTheDoorbell() throws Exception {
        try (ShmPair pair = ShmPair.connected(dir, 8, 2, 64)) {
            CountDownLatch rung = new CountDownLatch(1);
            Thread[] by = new Thread[1];
            pair.serverRecvCq.requestNotify(() -> {
                by[0] = Thread.currentThread();
                rung.countDown();
            });
            assertEquals(1, rung.getCount(), "nothing pending: the notifier waits");
            pair.clientQp.postSend(1, pair.clientMr, 0, 8, 0);
            assertTrue(rung.await(20, TimeUnit.SECONDS));
            assertTrue(by[0].getName().startsWith("rdmanio-shm-watcher"), by[0].getName());
            // Armed with a completion pending: fires at once.
            CountDownLatch atOnce = new CountDownLatch(1);
            pair.serverRecvCq.requestNotify(atOnce::countDown);
            assertEquals(0, atOnce.getCount());
            // Events too.
            CountDownLatch event = new CountDownLatch(1);
            pair.clientEvents.requestNotify(event::countDown);
            pair.server.disconnect();
            assertTrue(event.await(20, TimeUnit.SECONDS));
        }
    }

    @Test
    void noDoorbellIsRungWhileTheReceiverPollsWithoutArming() throws Exception {
        try (ShmPair pair = ShmPair.connected(dir, 8, 8, 64)) {
            Completions out = new Completions(8);
            for (int i = 0; i < 1000; i++) {
                pair.clientQp.postSend(i, pair.clientMr, 0, 64, QueuePair.SIGNALED);
                pollExactly(pair.clientSendCq, out, 1);
                pollExactly(pair.serverRecvCq, out, 1);
                pair.serverQp.postRecv(out.wrId[0], pair.serverMr, (int) (out.wrId[0] - 1000) * 64, 64);
            }
            assertEquals(0, pair.clientFabric.doorbellCount(), "a doorbell was rung for a queue nobody armed");
            // Armed once: exactly one doorbell for the next completion, none for the one after.
            CountDownLatch rung = new CountDownLatch(1);
            pair.serverRecvCq.requestNotify(rung::countDown);
            pair.clientQp.postSend(1, pair.clientMr, 0, 64, 0);
            assertTrue(rung.await(20, TimeUnit.SECONDS));
            pair.clientQp.postSend(2, pair.clientMr, 0, 64, QueuePair.SIGNALED);
            pollExactly(pair.clientSendCq, out, 1);
            assertEquals(1, pair.clientFabric.doorbellCount());
        }
    }

    @Test
    void filesAreUnlinkedAndPrivate() throws IOException {
        try (ShmPair pair = ShmPair.connected(dir, 8, 2, 64)) {
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
            // Only the listener's socket has a name; it is 0600.
            try (var files = Files.list(dir)) {
                var names = files.map(p -> p.getFileName().toString()).toList();
                assertEquals(1, names.size(), names.toString());
                assertTrue(names.get(0).startsWith("l-127.0.0.1-") && names.get(0).endsWith(".sock"), names.get(0));
            }
            Path socket = pair.serverFabric.rendezvousPath(pair.listener.localAddress());
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)));
            // The region files live on unlinked, mode 0600, reachable through /proc/PID/fd/FD only.
            ShmMemoryRegion region = (ShmMemoryRegion) pair.serverMr;
            Path viaProc = ShmHost.descriptorPath(ShmHost.pid(), region.file.fd);
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(viaProc)));
            assertTrue(Files.readSymbolicLink(viaProc).toString().endsWith("(deleted)"));
        }
    }

    @Test
    void differentUserIsRefusedNamingBothUids() {
        assertEquals(null, ShmCmId.userRefusal(1000, "alice", "alice"));
        String reason = ShmCmId.userRefusal(0, "root", "nobody");
        assertTrue(reason.contains("nobody") && reason.contains("uid 65534") && reason.contains("uid 0")
            && reason.contains("root"), reason);
        String numeric = ShmCmId.userRefusal(0, "root", "4242");
        assertTrue(numeric.contains("uid 4242"), numeric);
    }

    @Test
    void anotherHostOrAnotherDirectoryIsRefusedNamingWhatDiffers() {
        Path d = Path.of("/dev/shm/x");
        assertEquals(null, ShmCmId.hostMismatch("boot-a", 1, 2, d, "boot-a", 1, 2));
        String host = ShmCmId.hostMismatch("boot-a", 1, 2, d, "boot-b", 1, 2);
        assertTrue(host.contains("boot-b") && host.contains("boot-a") && host.contains("not on this host"), host);
        String directory = ShmCmId.hostMismatch("boot-a", 1, 2, d, "boot-a", 1, 3);
        assertTrue(directory.contains("inode 3") && directory.contains("rdmanio.shm.dir"), directory);
    }

    @Test
    void groupSettingSharesFilesWithTheGroup() throws IOException {
        Path shared = dir.resolve("g");
        try (ShmFabric fabric = (ShmFabric) Fabrics.open("shm",
            Map.of(ShmFabricProvider.DIR, shared.toString(), ShmFabricProvider.GROUP, "root"))) {
            assertEquals("rwxrwx---", PosixFilePermissions.toString(Files.getPosixFilePermissions(shared)));
            ShmMemoryRegion region = (ShmMemoryRegion) fabric.allocate(4096, MemoryRegion.LOCAL_WRITE);
            Path viaProc = ShmHost.descriptorPath(ShmHost.pid(), region.file.fd);
            assertEquals("rw-rw----", PosixFilePermissions.toString(Files.getPosixFilePermissions(viaProc)));
            assertEquals("root", Files.readAttributes(viaProc, java.nio.file.attribute.PosixFileAttributes.class)
                .group().getName());
        }
    }
}
