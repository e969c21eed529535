package io.rdmanio.core.fabric.shm;

import static io.rdmanio.core.fabric.shm.ShmTestSupport.expect;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.QueuePair;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/** A client and a server on two shm fabrics of one JVM (one directory), each side with its own queues. */
final class ShmPair implements AutoCloseable {

    static final int REGION = 1 << 16;
    static final int ACCESS = MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_WRITE;

    final ShmFabric serverFabric;
    final ShmFabric clientFabric;
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
    final int depth;

    ShmPair(Path dir, int depth) throws IOException {
        this.depth = depth;
        serverFabric = ShmTestSupport.open(dir);
        clientFabric = ShmTestSupport.open(dir);
        serverEvents = serverFabric.createEventChannel();
        clientEvents = clientFabric.createEventChannel();
        listener = serverFabric.createId(serverEvents);
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        listener.listen(8);
        clientSendCq = clientFabric.createCompletionQueue(depth * 2);
        clientRecvCq = clientFabric.createCompletionQueue(depth * 2);
        serverSendCq = serverFabric.createCompletionQueue(depth * 2);
        serverRecvCq = serverFabric.createCompletionQueue(depth * 2);
        clientMr = clientFabric.allocate(REGION, ACCESS);
        serverMr = serverFabric.allocate(REGION, ACCESS);
        client = clientFabric.createId(clientEvents);
        clientQp = client.createQueuePair(new QueuePair.Config(clientSendCq, clientRecvCq, depth, depth, 64));
    }

    /** Connects with the given private data; returns the request event at the server. */
    CmEvent request(ByteBuffer data) throws IOException {
        client.connect(listener.localAddress(), data);
        CmEvent request = expect(serverEvents, CmEvent.Type.CONNECT_REQUEST);
        server = request.id();
        return request;
    }

    /** Accepts the pending request with a fresh queue pair, posting {@code serverReceives} first. */
    void accept(ByteBuffer data, int serverReceives, int receiveSize) throws IOException {
        serverQp = server.createQueuePair(new QueuePair.Config(serverSendCq, serverRecvCq, depth, depth, 64));
        for (int i = 0; i < serverReceives; i++) {
            serverQp.postRecv(1000 + i, serverMr, i * receiveSize, receiveSize);
        }
        server.accept(data);
    }

    /** A connected pair: the server posted {@code serverReceives} receives of {@code receiveSize} bytes. */
    static ShmPair connected(Path dir, int depth, int serverReceives, int receiveSize) throws IOException {
        ShmPair pair = new ShmPair(dir, depth);
        pair.request(null);
        pair.accept(null, serverReceives, receiveSize);
        expect(pair.clientEvents, CmEvent.Type.ESTABLISHED);
        expect(pair.serverEvents, CmEvent.Type.ESTABLISHED);
        return pair;
    }

    @Override
    public void close() {
        clientFabric.close();
        serverFabric.close();
    }
}
