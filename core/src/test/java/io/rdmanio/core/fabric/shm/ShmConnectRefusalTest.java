package io.rdmanio.core.fabric.shm;

import static io.rdmanio.core.fabric.shm.ShmTestSupport.expect;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A refused connect says what it found: no socket file, a file no process listens on (left by a process that is
 * gone), or a live listener whose kernel queue stayed full after the bounded wait (as a connect from a virtual
 * thread meets it: non-blocking, EAGAIN).
 */
class ShmConnectRefusalTest extends WithShmDirectory {

    /** Connects to {@code socket} without accepting until its kernel queue is full; the connects go to {@code into}. */
    private static void fillQueue(Path socket, List<SocketChannel> into) throws IOException {
        for (int i = 0; i < 16; i++) {
            SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX);
            into.add(c);
            c.configureBlocking(false);
            try {
                c.connect(UnixDomainSocketAddress.of(socket));
            } catch (SocketException e) {
                return; // full
            }
        }
    }

    private static String refusal(ShmFabric fabric, InetSocketAddress to) throws IOException {
        EventChannel events = fabric.createEventChannel();
        CmId id = ShmTestSupport.connecting(fabric, events, to);
        CmEvent rejected = expect(events, CmEvent.Type.REJECTED);
        id.close();
        return rejected.reason();
    }

    @Test
    void eachRefusalNamesWhatWasFound() throws IOException {
        try (ShmFabric fabric = ShmTestSupport.open(dir)) {
            InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), 40999);
            Path socket = fabric.rendezvousPath(address);

            String none = refusal(fabric, address);
            assertTrue(none.contains("no listener") && none.contains("no rendezvous socket"), none);

            // The server this connect looked for listens on the kernel's TCP, bound to the wildcard address.
            try (java.net.ServerSocket tcp = new java.net.ServerSocket(0)) {
                InetSocketAddress onTcp = new InetSocketAddress(InetAddress.getLoopbackAddress(), tcp.getLocalPort());
                String hint = refusal(fabric, onTcp);
                assertTrue(hint.contains("no listener") && hint.contains("the kernel's TCP has a listener on port "
                    + tcp.getLocalPort() + " at the wildcard address"), hint);
            }

            try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                dead.bind(UnixDomainSocketAddress.of(socket));
            }
            String stale = refusal(fabric, address);
            assertTrue(stale.contains("left by a process that is gone"), stale);

            // A live listener that never accepts, its kernel queue filled (backlog 1).
            java.nio.file.Files.delete(socket);
            List<SocketChannel> fillers = new ArrayList<>();
            try (ServerSocketChannel stuck = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                stuck.bind(UnixDomainSocketAddress.of(socket), 1);
                fillQueue(socket, fillers);
                long start = System.nanoTime();
                String full = refusal(fabric, address);
                System.out.println("a full listener queue refused after "
                    + (System.nanoTime() - start) / 1_000_000 + " ms: " + full);
                assertTrue(full.contains("alive but accepted no connection"), full);
                assertTrue(!full.contains("gone"), full);
            } finally {
                for (SocketChannel c : fillers) {
                    c.close();
                }
            }
        }
    }

    /**
     * A thread carrying its interrupt status (a selector thread run so, an application thread interrupted while it
     * connects) binds over a stale socket and meets a full listener exactly as any other: the bind succeeds, the
     * refusal names the full queue (not a closed channel), and the thread keeps its interrupt status.
     */
    @Test
    void anInterruptedCallerBindsOverAStaleSocketAndIsToldOfAFullQueue() throws IOException {
        try (ShmFabric fabric = ShmTestSupport.open(dir)) {
            InetSocketAddress stale = new InetSocketAddress(InetAddress.getLoopbackAddress(), 40998);
            try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                dead.bind(UnixDomainSocketAddress.of(fabric.rendezvousPath(stale)));
            }
            EventChannel events = fabric.createEventChannel();
            CmId listener = fabric.createId(events);
            Thread.currentThread().interrupt();
            try {
                listener.bind(stale);
            } finally {
                assertTrue(Thread.interrupted(), "the bind kept the caller's interrupt status");
            }
            listener.listen(4);
            listener.close();

            InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), 40997);
            Path socket = fabric.rendezvousPath(address);
            List<SocketChannel> fillers = new ArrayList<>();
            try (ServerSocketChannel stuck = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                stuck.bind(UnixDomainSocketAddress.of(socket), 1);
                fillQueue(socket, fillers);
                CompletionQueue cq = fabric.createCompletionQueue(8);
                CmId id = fabric.createId(events);
                id.createQueuePair(new QueuePair.Config(cq, cq, 4, 4, 64));
                Thread.currentThread().interrupt();
                try {
                    id.connect(address, null);
                } finally {
                    assertTrue(Thread.interrupted(), "the connect kept the caller's interrupt status");
                }
                CmEvent rejected = expect(events, CmEvent.Type.REJECTED);
                id.close();
                assertTrue(rejected.reason().contains("alive but accepted no connection"), rejected.reason());
            } finally {
                for (SocketChannel c : fillers) {
                    c.close();
                }
            }
        }
    }
}
