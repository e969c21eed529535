package io.rdmanio.core.fabric.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.QueuePair;
import io.rdmanio.core.testsupport.QueueOptions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;

/**
 * A client and a server on two loopback fabrics of one JVM, each side with its own send and receive completion
 * queues and one registered region.
 */
final class Link implements AutoCloseable {

    static final int REGION = 1 << 16;

    final QueueOptions options;
    final LoopbackFabric serverFabric;
    final LoopbackFabric clientFabric;
    final EventChannel serverEvents;
    final EventChannel clientEvents;
    final CmId listener;
    final CmId client;
    CmId server;
    final CompletionQueue clientSendCq;
    final CompletionQueue clientRecvCq;
    final CompletionQueue serverSendCq;
    final CompletionQueue serverRecvCq;
    final QueuePair clientQp;
    QueuePair serverQp;
    final MemoryRegion clientMr;
    final MemoryRegion serverMr;
    final Completions out = new Completions(64);

    private Link(QueueOptions options) throws IOException {
        this.options = options;
        serverFabric = open();
        clientFabric = open();
        serverEvents = serverFabric.createEventChannel();
        clientEvents = clientFabric.createEventChannel();
        listener = serverFabric.createId(serverEvents);
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        listener.listen(8);
        clientSendCq = clientFabric.createCompletionQueue(options.cqEntries);
        clientRecvCq = clientFabric.createCompletionQueue(options.cqEntries);
        serverSendCq = serverFabric.createCompletionQueue(options.cqEntries);
        serverRecvCq = serverFabric.createCompletionQueue(options.cqEntries);
        clientMr = clientFabric.register(ByteBuffer.allocateDirect(REGION), options.access);
        serverMr = serverFabric.register(ByteBuffer.allocateDirect(REGION), options.access);
        client = clientFabric.createId(clientEvents);
        clientQp = client.createQueuePair(config(clientSendCq, clientRecvCq));
    }

    QueuePair.Config config(CompletionQueue send, CompletionQueue recv) {
        return new QueuePair.Config(send, recv, options.sendWr, options.recvWr, options.inline);
    }

    static LoopbackFabric open() throws IOException {
        return (LoopbackFabric) Fabrics.open("loopback", Map.of());
    }

    /** A listener and a client with its queue pair; nothing sent yet. */
    static Link unconnected(QueueOptions options) throws IOException {
        return new Link(options);
    }

    /** A link whose client has sent its connect request, not yet accepted. */
    static Link requested(QueueOptions options, ByteBuffer connectData) throws IOException {
        Link link = new Link(options);
        link.client.connect(link.listener.localAddress(), connectData);
        CmEvent request = expect(link.serverEvents, CmEvent.Type.CONNECT_REQUEST);
        link.server = request.id();
        return link;
    }

    /** A connected link; the server posted {@code options.serverReceives} receives before accepting. */
    static Link connected(QueueOptions options) throws IOException {
        Link link = requested(options, null);
        link.serverQp = link.server.createQueuePair(link.config(link.serverSendCq, link.serverRecvCq));
        for (int i = 0; i < options.serverReceives; i++) {
            link.serverQp.postRecv(1000 + i, link.serverMr, i * options.serverReceiveSize, options.serverReceiveSize);
        }
        link.server.accept(null);
        expect(link.serverEvents, CmEvent.Type.ESTABLISHED);
        expect(link.clientEvents, CmEvent.Type.ESTABLISHED);
        return link;
    }

    static Link connected() throws IOException {
        return connected(new QueueOptions().serverReceives(4, 1024));
    }

    /** The next event of {@code channel}, which must be of {@code type}. */
    static CmEvent expect(EventChannel channel, CmEvent.Type type) throws IOException {
        CmEvent event = channel.poll();
        assertNotNull(event, "expected a " + type + " event, none pending");
        assertEquals(type, event.type(), () -> "event " + event);
        return event;
    }

    /** Polls {@code cq} once; the completions are in {@link #out}. */
    int poll(CompletionQueue cq) throws IOException {
        return cq.poll(out);
    }

    /** Polls {@code cq} and checks it returns exactly one completion of {@code status}; returns its index 0. */
    void expectOne(CompletionQueue cq, int status, int opcode) throws IOException {
        int n = cq.poll(out);
        assertEquals(1, n, "completions polled");
        assertEquals(Completions.statusName(status), Completions.statusName(out.status[0]));
        assertEquals(opcode, out.opcode[0], "opcode");
    }

    void fill(MemoryRegion region, int offset, int length, int seed) {
        ByteBuffer b = region.buffer();
        for (int i = 0; i < length; i++) {
            b.put(offset + i, (byte) (seed + i * 31));
        }
    }

    void assertFilled(MemoryRegion region, int offset, int length, int seed) {
        ByteBuffer b = region.buffer();
        for (int i = 0; i < length; i++) {
            if (b.get(offset + i) != (byte) (seed + i * 31)) {
                assertTrue(false, "byte " + i + " of " + length + " differs");
            }
        }
    }

    @Override
    public void close() {
        clientFabric.close();
        serverFabric.close();
    }
}
