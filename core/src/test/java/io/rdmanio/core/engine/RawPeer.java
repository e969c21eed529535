package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.Completions;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.MemoryRegion;
import io.rdmanio.core.fabric.QueuePair;
import io.rdmanio.core.protocol.FrameDescriptor;
import io.rdmanio.core.protocol.HandshakeDescriptor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * A peer built directly on the fabric SPI, with its own queue pair and hand-written frames: it says whatever a
 * test wants, right or wrong. Driven by the test thread, which also pumps the engines.
 */
final class RawPeer implements AutoCloseable {

    static final int RECV_SLOTS = 16;
    static final int SEND_SLOTS = 8;
    /** Receive slots are as large as the engine's; send slots twice that, to send oversized frames. */
    final int slot;
    final Fabric fabric;
    final EventChannel events;
    final CompletionQueue cq;
    final MemoryRegion region;
    final ByteBuffer mem;
    final Completions completions = new Completions(64);
    CmId id;
    CmId listenId;
    QueuePair qp;
    private int nextSend;

    RawPeer(Fabric fabric, int slot) throws IOException {
        this.fabric = fabric;
        this.slot = slot;
        events = fabric.createEventChannel();
        cq = fabric.createCompletionQueue(256);
        // Allocated by the fabric: a shared-memory fabric receives only into memory its peers can map.
        region = fabric.allocate(slot * (RECV_SLOTS + 2 * SEND_SLOTS), MemoryRegion.LOCAL_WRITE);
        mem = region.buffer().order(FrameDescriptor.BYTE_ORDER);
    }

    private void setUpQp(CmId on) throws IOException {
        qp = on.createQueuePair(new QueuePair.Config(cq, cq, 32, RECV_SLOTS, 0));
        for (int i = 0; i < RECV_SLOTS; i++) {
            qp.postRecv(i, region, i * slot, slot);
        }
    }

    /** Connects with the given private data and waits for ESTABLISHED (or returns the other event). */
    CmEvent connect(Pair p, InetSocketAddress to, ByteBuffer privateData) throws IOException {
        return connect(p::pump, to, privateData);
    }

    /** As {@link #connect(Pair, InetSocketAddress, ByteBuffer)}, with {@code pump} driving the engines. */
    CmEvent connect(Runnable pump, InetSocketAddress to, ByteBuffer privateData) throws IOException {
        id = fabric.createId(events);
        setUpQp(id);
        id.connect(to, privateData);
        return awaitEvent(pump);
    }

    /** A handshake of {@code version} with the engine's slot size, 4 data and 2 control slots. */
    ByteBuffer handshake(int version) {
        return HandshakeDescriptor.allocate(version, 0, slot, 4, 2, 42);
    }

    /** Listens; {@link #acceptOne} then takes the engine's connect. */
    InetSocketAddress listen() throws IOException {
        listenId = fabric.createId(events);
        listenId.bind(new InetSocketAddress("127.0.0.1", 0));
        listenId.listen(8);
        return listenId.localAddress();
    }

    /**
     * Accepts the next connect request (without checking it) with a valid server handshake and returns the client's.
     */
    ByteBuffer acceptOne(Pair p) throws IOException {
        return acceptOne(p, handshake(HandshakeDescriptor.VERSION));
    }

    /** Accepts the next connect request with {@code privateData} as the server's handshake. */
    ByteBuffer acceptOne(Pair p, ByteBuffer privateData) throws IOException {
        CmEvent e = awaitEvent(p);
        if (e.type() != CmEvent.Type.CONNECT_REQUEST) {
            fail("expected a connect request, got " + e);
        }
        id = e.id();
        setUpQp(id);
        id.accept(privateData);
        CmEvent est = awaitEvent(p);
        if (est.type() != CmEvent.Type.ESTABLISHED) {
            fail("expected ESTABLISHED, got " + est);
        }
        return e.privateData().duplicate().order(FrameDescriptor.BYTE_ORDER);
    }

    CmEvent awaitEvent(Pair p) throws IOException {
        return awaitEvent(p::pump);
    }

    CmEvent awaitEvent(Runnable pump) throws IOException {
        long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS;
        for (;;) {
            CmEvent e = events.poll();
            if (e != null) {
                return e;
            }
            pump.run();
            pollCq();
            if (System.nanoTime() - deadline > 0) {
                fail("no connection-manager event for the raw peer");
            }
        }
    }

    /** Drains the raw peer's completions (keeping its receives posted). */
    int pollCq() throws IOException {
        int n = cq.poll(completions);
        for (int i = 0; i < n; i++) {
            if (completions.status[i] == Completions.SUCCESS && completions.opcode[i] == Completions.OP_RECV) {
                int k = (int) completions.wrId[i];
                qp.postRecv(k, region, k * slot, slot);
            }
        }
        return n;
    }

    /**
     * Sends a hand-written header (and {@code sendLength - 24} zero payload bytes, or a truncated prefix when
     * {@code sendLength < 24}).
     */
    void send(int type, int flags, int reserved, long lengthField, int sendLength, long dataCredit,
              long controlCredit) throws IOException {
        int off = (RECV_SLOTS + 2 * (nextSend++ % SEND_SLOTS)) * slot;
        for (int i = 0; i < 2 * slot; i++) {
            mem.put(off + i, (byte) 0);
        }
        FrameDescriptor.writeHeader(mem, off, type, (int) lengthField, dataCredit, controlCredit);
        mem.put(off + FrameDescriptor.FLAGS_OFFSET, (byte) flags);
        mem.putShort(off + FrameDescriptor.RESERVED_OFFSET, (short) reserved);
        qp.postSend(1000 + nextSend, region, off, sendLength, QueuePair.SIGNALED);
    }

    /** Sends a well-formed frame with the initial credits of {@link #handshake}. */
    void send(int type, int payload) throws IOException {
        send(type, 0, 0, payload, FrameDescriptor.HEADER_LENGTH + payload, 4, 2);
    }

    @Override
    public void close() {
        if (id != null) {
            id.close();
        }
        if (listenId != null) {
            listenId.close();
        }
        cq.close();
        events.close();
        region.close();
    }
}
