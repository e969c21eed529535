package io.rdmanio.core.fabric.shm;

import static io.rdmanio.core.fabric.shm.ShmTestSupport.expect;
import static io.rdmanio.core.fabric.shm.ShmTestSupport.pollExactly;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/**
 * 10^4 connect, exchange, disconnect and close cycles between two fabrics of this JVM (the same code paths as
 * two processes: every file is created, mapped through /proc/PID/fd and unlinked as between processes), then
 * no descriptor and no file may be left over.
 */
class ShmLeakTest extends WithShmDirectory {

    private static final int CYCLES = 10_000;

    @Test
    void connectAndCloseCyclesLeakNoDescriptorAndNoFile() throws IOException, InterruptedException {
        try (ShmFabric serverFabric = ShmTestSupport.open(dir); ShmFabric clientFabric = ShmTestSupport.open(dir)) {
            EventChannel serverEvents = serverFabric.createEventChannel();
            EventChannel clientEvents = clientFabric.createEventChannel();
            CompletionQueue serverCq = serverFabric.createCompletionQueue(16);
            CompletionQueue clientCq = clientFabric.createCompletionQueue(16);
            MemoryRegion serverMr = serverFabric.allocate(4096, MemoryRegion.LOCAL_WRITE);
            MemoryRegion clientMr = clientFabric.allocate(4096, MemoryRegion.LOCAL_WRITE);
            CmId listener = serverFabric.createId(serverEvents);
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            listener.listen(8);
            Completions out = new Completions(16);
            int fds = 0;
            int files = 0;
            for (int cycle = 0; cycle <= CYCLES; cycle++) {
                if (cycle == 1) {
                    // After one cycle both watcher threads run: count from here.
                    fds = ShmTestSupport.openDescriptors();
                    files = ShmTestSupport.entries(dir);
                }
                CmId client = clientFabric.createId(clientEvents);
                QueuePair clientQp = client.createQueuePair(new QueuePair.Config(clientCq, clientCq, 2, 2, 0));
                clientQp.postRecv(1, clientMr, 0, 64);
                client.connect(listener.localAddress(), null);
                CmId server = expect(serverEvents, CmEvent.Type.CONNECT_REQUEST).id();
                QueuePair serverQp = server.createQueuePair(new QueuePair.Config(serverCq, serverCq, 2, 2, 0));
                serverQp.postRecv(2, serverMr, 0, 64);
                server.accept(null);
                expect(clientEvents, CmEvent.Type.ESTABLISHED);
                expect(serverEvents, CmEvent.Type.ESTABLISHED);
                clientQp.postSend(3, clientMr, 100, 64, QueuePair.SIGNALED);
                pollExactly(clientCq, out, 1);
                pollExactly(serverCq, out, 1);
                assertEquals(Completions.SUCCESS, out.status[0]);
                if (cycle % 2 == 0) {
                    client.disconnect();
                } else {
                    server.disconnect();
                }
                expect(clientEvents, CmEvent.Type.DISCONNECTED);
                expect(serverEvents, CmEvent.Type.DISCONNECTED);
                pollExactly(clientCq, out, 1);
                assertEquals(Completions.WR_FLUSH_ERR, out.status[0]);
                client.close();
                server.close();
            }
            assertEquals(files, ShmTestSupport.entries(dir), "files left in the shm directory");
            // Other tests of this JVM may close descriptors meanwhile; a leak of one per cycle shows as growth. The
            // last connection's socket may still be closing on the fabric's watcher thread: wait for it, bounded.
            int after = ShmTestSupport.openDescriptors();
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
            while (after > fds && System.nanoTime() - deadline < 0) {
                Thread.sleep(10);
                after = ShmTestSupport.openDescriptors();
            }
            assertTrue(after <= fds, "descriptors left open: " + fds + " before, " + after + " after " + CYCLES
                + " cycles");
            assertEquals(0, serverFabric.peerCount());
            assertEquals(0, clientFabric.peerCount());
            listener.close();
        }
        assertEquals(0, ShmTestSupport.entries(dir), "a closed fabric leaves nothing in its directory");
    }
}
