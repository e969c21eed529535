package io.rdmanio.core.fabric;

import static io.rdmanio.core.fabric.Completions.LOC_LEN_ERR;
import static io.rdmanio.core.fabric.Completions.LOC_PROT_ERR;
import static io.rdmanio.core.fabric.Completions.OP_RECV;
import static io.rdmanio.core.fabric.Completions.OP_SEND;
import static io.rdmanio.core.fabric.Completions.REM_INV_REQ_ERR;
import static io.rdmanio.core.fabric.Completions.RNR_RETRY_EXC_ERR;
import static io.rdmanio.core.fabric.Completions.SUCCESS;
import static io.rdmanio.core.fabric.Completions.WR_FLUSH_ERR;
import static io.rdmanio.core.fabric.QueuePair.SIGNALED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.testsupport.CompletionWaits;
import io.rdmanio.core.testsupport.QueueOptions;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What every fabric must do, written once against the fabric SPI: a fabric is done when this suite passes on it.
 *
 * <p>A fabric's test class extends this one and says how to open the fabric ({@link #open()}, called once for each
 * side of a connection, so that client and server are two fabric instances as two processes would be) and where a
 * listener binds ({@link #listenAddress()}). Nothing here names a fabric's own classes: a case that a fabric cannot
 * hold is overridden in its subclass, disabled with the reason, and reported.
 *
 * <p>The cases: connection-manager events and their private data; binding; regions and keys; receives consumed one
 * per message, in order; strictness (no posted receive, too small a receive, a bad key or range, a post on a queue
 * pair that is not connected, in error or destroyed), each an error completion or an exception whose message names
 * the rule, as a verbs device reports it; completion order; flushing of posted work when the connection ends;
 * notifiers. Where a device reports a rule's failure with another status than the SPI names, the fabric's subclass
 * says so through {@link #statusesFor} and the other hooks below.
 * Events and completions may arrive asynchronously (shm's watcher thread, a device): every wait is bounded, and no
 * case asserts a time.
 */
public abstract class AbstractFabricConformanceTest {

    /** Bytes of each side's region. */
    protected static final int REGION = 1 << 16;
    /** How long any one event or completion may take to arrive. */
    protected static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

    /** How long a waiter blocks on a notifier before it polls again anyway (a lost notification must not hang). */
    private static final long SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private Fabric serverFabric;
    private Fabric clientFabric;

    /**
     * Opens the fabric under test. Called at most twice per test: the first fabric serves the listener and the
     * accepted side, the second the client; the suite closes both after the test.
     */
    protected abstract Fabric open() throws IOException;

    /** The address a listener binds to (with port 0): one a client of another instance of the fabric reaches. */
    protected abstract InetAddress listenAddress();

    /**
     * The fabric's count of sends that failed because no receive was posted at the peer, or -1 when the
     * fabric keeps none. Each software and verbs fabric counts them; the count is not part of the SPI.
     */
    protected long receiverNotReadyCount(Fabric fabric) {
        return -1;
    }

    /**
     * Whether the {@link CmEvent.Type#DISCONNECTED} event of the side whose request failed names the failure
     * (receiver not ready, remote access error). The software fabrics do; a verbs fabric learns of the end from
     * the connection manager, which does not say why.
     */
    protected boolean disconnectNamesTheFailure() {
        return true;
    }

    /**
     * Whether the other side of a request that failed at its peer (no posted receive, a bad key) learns why: its
     * {@link CmEvent.Type#DISCONNECTED} names the failure and its fabric counts a receiver-not-ready
     * ({@link #receiverNotReadyCount}). The software fabrics see both ends; a device tells only the requester.
     */
    protected boolean peerLearnsTheFailure() {
        return true;
    }

    /**
     * The statuses this fabric may report where the suite expects the error {@code expected}: by default that one.
     * The software fabrics report exactly the status the SPI names for each rule; a device reports what its driver
     * chose (soft-RoCE reports an invalid lkey as a queue-pair operation error, for one), and its fabric passes it on
     * unchanged. Never widened for {@link Completions#SUCCESS} or {@link Completions#WR_FLUSH_ERR}.
     */
    protected Set<Integer> statusesFor(int expected) {
        return Set.of(expected);
    }

    protected final Fabric serverFabric() throws IOException {
        if (serverFabric == null) {
            serverFabric = open();
        }
        return serverFabric;
    }

    protected final Fabric clientFabric() throws IOException {
        serverFabric();
        if (clientFabric == null) {
            clientFabric = open();
        }
        return clientFabric;
    }

    @AfterEach
    void closeFabrics() throws IOException {
        try {
            if (clientFabric != null) {
                clientFabric.close();
            }
        } finally {
            clientFabric = null;
            if (serverFabric != null) {
                serverFabric.close();
            }
            serverFabric = null;
        }
    }

    // ---- connection-manager events and private data

    @Test
    void acceptEstablishesBothSidesAndPrivateDataTravelsBothWays() throws IOException {
        Link link = new Link(options());
        link.client.connect(link.listener.localAddress(), ascii("hello"));
        CmEvent request = expect(link.serverEvents, CmEvent.Type.CONNECT_REQUEST);
        assertEquals("hello", ascii(request.privateData()));
        assertTrue(request.privateData().isReadOnly(), "the request's private data is read-only");
        assertSame(link.listener, request.listenId());
        CmId child = request.id();
        assertNotNull(child);
        child.createQueuePair(link.config(link.serverSendCq, link.serverRecvCq));
        String welcome = "accepted, with 56 bytes of private data, the most there is"
            .substring(0, CmId.MAX_PRIVATE_DATA);
        child.accept(ascii(welcome));
        assertSame(child, expect(link.serverEvents, CmEvent.Type.ESTABLISHED).id());
        CmEvent established = expect(link.clientEvents, CmEvent.Type.ESTABLISHED);
        assertSame(link.client, established.id());
        assertEquals(welcome, ascii(established.privateData()));
        assertEquals(link.listener.localAddress(), link.client.remoteAddress());
        assertEquals(link.client.localAddress(), child.remoteAddress());
        assertEquals(link.listener.localAddress(), child.localAddress());
        assertEquals(listenAddress(), link.client.localAddress().getAddress());
        assertNotEquals(0, link.client.localAddress().getPort());
    }

    @Test
    void privateDataUpToTheLimitTravelsAndMoreIsRefused() throws IOException {
        Link link = new Link(options());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> link.client.connect(link.listener.localAddress(), ByteBuffer.allocate(CmId.MAX_PRIVATE_DATA + 1)));
        assertTrue(e.getMessage().contains(String.valueOf(CmId.MAX_PRIVATE_DATA)), e.getMessage());
        ByteBuffer most = ByteBuffer.allocate(CmId.MAX_PRIVATE_DATA);
        for (int i = 0; i < most.capacity(); i++) {
            most.put(i, (byte) (i * 5 + 1));
        }
        link.client.connect(link.listener.localAddress(), most);
        CmEvent request = expect(link.serverEvents, CmEvent.Type.CONNECT_REQUEST);
        assertEquals(most.rewind(), request.privateData());
    }

    @Test
    void rejectCarriesPrivateDataToTheClient() throws IOException {
        Link link = new Link(options());
        link.request(ascii("may I?"));
        link.server.reject(ascii("no: version 9"));
        CmEvent rejected = expect(link.clientEvents, CmEvent.Type.REJECTED);
        assertSame(link.client, rejected.id());
        assertEquals("no: version 9", ascii(rejected.privateData()));
        assertThrows(FabricException.class, () -> link.server.accept(null), "accept after reject");
    }

    @Test
    void connectWhereNobodyListensIsRefusedWithoutPrivateData() throws IOException {
        Link link = new Link(options());
        InetSocketAddress gone;
        CmId closed = serverFabric().createId(link.serverEvents);
        closed.bind(new InetSocketAddress(listenAddress(), 0));
        closed.listen(1);
        gone = closed.localAddress();
        closed.close();
        link.client.connect(gone, ascii("anyone?"));
        CmEvent rejected = expect(link.clientEvents, CmEvent.Type.REJECTED);
        assertEquals(0, rejected.privateData().remaining(), "a refusal by the fabric carries no private data");
        assertTrue(rejected.reason().startsWith("connection refused: no listener at " + gone), rejected.reason());
        assertTrue(rejected.reason().contains(" on the " + clientFabric().name() + " fabric"), rejected.reason());
    }

    @Test
    void closingAListenerRefusesTheRequestsItHasNotAnswered() throws IOException {
        Link link = new Link(options());
        link.request(ascii("late"));
        link.listener.close();
        CmEvent rejected = expect(link.clientEvents, CmEvent.Type.REJECTED);
        assertEquals(0, rejected.privateData().remaining(), "a refusal by the fabric carries no private data");
        assertTrue(rejected.reason().contains("closed"), rejected.reason());
        assertNull(link.serverEvents.poll(), "the closed listener reports nothing more");
    }

    @Test
    void bindingAnAddressInUseThrowsBindExceptionUntilItsHolderCloses() throws IOException {
        Link link = new Link(options());
        InetSocketAddress taken = link.listener.localAddress();
        CmId other = clientFabric().createId(link.clientEvents);
        BindException e = assertThrows(BindException.class, () -> other.bind(taken));
        assertTrue(e.getMessage().contains(taken.toString()), e.getMessage());
        link.listener.close();
        other.bind(taken);
        assertEquals(taken, other.localAddress());
        other.listen(1);
    }

    @Test
    void anUnresolvedAddressIsUnreachable() throws IOException {
        Link link = new Link(options());
        link.client.connect(InetSocketAddress.createUnresolved("no-such-host.invalid", 7), null);
        CmEvent event = expect(link.clientEvents, CmEvent.Type.UNREACHABLE);
        assertTrue(event.reason().contains("no-such-host.invalid"), event.reason());
        assertEquals(0, event.privateData().remaining());
    }

    @Test
    void disconnectGivesBothSidesDisconnectedOnce() throws IOException {
        Link link = connected(options());
        link.client.disconnect();
        expect(link.clientEvents, CmEvent.Type.DISCONNECTED);
        expect(link.serverEvents, CmEvent.Type.DISCONNECTED);
        assertTrue(link.clientQp.isError(), "the client's queue pair is in the error state");
        assertTrue(link.serverQp.isError(), "the server's queue pair is in the error state");
        link.server.disconnect();
        link.client.disconnect();
        assertNull(link.serverEvents.poll(), "a second disconnect reports nothing");
        assertNull(link.clientEvents.poll(), "a second disconnect reports nothing");
    }

    @Test
    void closingAConnectedIdDisconnectsThePeerAndFlushesItsReceives() throws IOException {
        Link link = connected(options().serverReceives(4, 1024));
        link.client.close();
        expect(link.serverEvents, CmEvent.Type.DISCONNECTED);
        assertTrue(link.serverQp.isError());
        Completions flushed = await(link.serverRecvCq, 4);
        for (int i = 0; i < 4; i++) {
            assertEquals(1000 + i, flushed.wrId[i], "flushed in the order they were posted");
            assertStatus(WR_FLUSH_ERR, flushed.status[i]);
            assertEquals(OP_RECV, flushed.opcode[i]);
        }
    }

    // ---- registration and keys

    @Test
    void regionsHaveTheirBoundsAndDistinctKeys() throws IOException {
        Fabric fabric = serverFabric();
        Set<Integer> lkeys = new HashSet<>();
        Set<Integer> rkeys = new HashSet<>();
        long[][] spans = new long[8][];
        for (int i = 0; i < spans.length; i++) {
            int length = 4096 * (i + 1);
            int access = i % 2 == 0 ? MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_WRITE : MemoryRegion.LOCAL_WRITE;
            MemoryRegion r = fabric.allocate(length, access);
            assertEquals(length, r.length());
            assertEquals(access, r.access());
            ByteBuffer b = r.buffer();
            assertTrue(b.isDirect());
            assertEquals(0, b.position());
            assertEquals(length, b.remaining(), "the buffer is the region");
            assertTrue(lkeys.add(r.lkey()), "lkey " + r.lkey() + " of region " + i + " is another region's");
            if ((access & MemoryRegion.REMOTE_WRITE) != 0) {
                // An rkey means something only where a peer may use it (a device gives other regions none).
                assertTrue(rkeys.add(r.rkey()), "rkey " + r.rkey() + " of region " + i + " is another region's");
            }
            spans[i] = new long[] {r.address(), r.address() + length};
        }
        for (int i = 0; i < spans.length; i++) {
            for (int j = i + 1; j < spans.length; j++) {
                assertTrue(spans[i][1] <= spans[j][0] || spans[j][1] <= spans[i][0],
                    "regions " + i + " and " + j + " overlap");
            }
        }
    }

    @Test
    void heapBuffersAndRemoteWriteWithoutLocalWriteAreRefused() throws IOException {
        Fabric fabric = serverFabric();
        IllegalArgumentException heap = assertThrows(IllegalArgumentException.class,
            () -> fabric.register(ByteBuffer.allocate(64), MemoryRegion.LOCAL_WRITE));
        assertTrue(heap.getMessage().contains("direct buffers"), heap.getMessage());
        IllegalArgumentException access = assertThrows(IllegalArgumentException.class,
            () -> fabric.register(ByteBuffer.allocateDirect(64), MemoryRegion.REMOTE_WRITE));
        assertTrue(access.getMessage().contains("LOCAL_WRITE"), access.getMessage());
    }

    // ---- posted receives and the data path

    @Test
    void eachSendConsumesExactlyTheOldestPostedReceive() throws IOException {
        Link link = connected(options().serverReceives(4, 4096));
        int[] sizes = {1, 700, 4096};
        for (int m = 0; m < sizes.length; m++) {
            fill(link.clientMr, m * 4096, sizes[m], m);
            // Only the last is signaled: unsignaled sends complete silently.
            link.clientQp.postSend(42 + m, link.clientMr, m * 4096, sizes[m], m == sizes.length - 1 ? SIGNALED : 0);
        }
        Completions got = await(link.serverRecvCq, sizes.length);
        for (int m = 0; m < sizes.length; m++) {
            assertStatus(SUCCESS, got.status[m]);
            assertEquals(OP_RECV, got.opcode[m]);
            assertEquals(1000 + m, got.wrId[m], "the oldest posted receive is consumed first");
            assertEquals(sizes[m], got.byteLen[m]);
            assertEquals(link.serverQp.qpNum(), got.qpNum[m]);
            check(link.serverMr, m * 4096, sizes[m], m);
        }
        Completions sent = await(link.clientSendCq, 1);
        assertStatus(SUCCESS, sent.status[0]);
        assertEquals(OP_SEND, sent.opcode[0]);
        assertEquals(42 + sizes.length - 1, sent.wrId[0]);
        assertEquals(link.clientQp.qpNum(), sent.qpNum[0]);
        // One receive is left: the next send lands in it, not in one of those already used.
        fill(link.clientMr, 0, 10, 9);
        link.clientQp.postSend(50, link.clientMr, 0, 10, SIGNALED);
        Completions last = await(link.serverRecvCq, 1);
        assertEquals(1003, last.wrId[0]);
        assertEquals(10, last.byteLen[0]);
        check(link.serverMr, 3 * 4096, 10, 9);
        await(link.clientSendCq, 1);
        assertFalse(link.clientQp.isError());
        assertFalse(link.serverQp.isError());
        assertEquals(0, link.poll(link.clientRecvCq), "completions go only to the queue pair's own queues");
        assertEquals(0, link.poll(link.serverSendCq), "completions go only to the queue pair's own queues");
        assertEquals(0, link.poll(link.serverRecvCq), "one completion per send");
    }

    @Test
    void sendsCompleteInPostOrderAndReceivesInArrivalOrder() throws IOException {
        int n = 12;
        Link link = connected(options().sendWr(16).recvWr(16).serverReceives(n, 1024));
        for (int m = 0; m < n; m++) {
            fill(link.clientMr, m * 1024, 100 + m, m);
            link.clientQp.postSend(m, link.clientMr, m * 1024, 100 + m, SIGNALED);
        }
        Completions sent = await(link.clientSendCq, n);
        Completions got = await(link.serverRecvCq, n);
        for (int m = 0; m < n; m++) {
            assertStatus(SUCCESS, sent.status[m]);
            assertEquals(m, sent.wrId[m], "sends complete in the order they were posted");
            assertEquals(OP_SEND, sent.opcode[m]);
            assertStatus(SUCCESS, got.status[m]);
            assertEquals(1000 + m, got.wrId[m], "receives are consumed in the order they were posted");
            assertEquals(100 + m, got.byteLen[m], "and complete in the order the messages arrived");
            assertEquals(OP_RECV, got.opcode[m]);
            check(link.serverMr, m * 1024, 100 + m, m);
        }
    }

    // ---- strictness

    @Test
    void aSendWithNoPostedReceiveIsReceiverNotReadyAndEndsTheConnection() throws IOException {
        Link link = connected(options().serverReceives(1, 1024));
        long clientBefore = receiverNotReadyCount(clientFabric());
        long serverBefore = receiverNotReadyCount(serverFabric());
        link.clientQp.postSend(1, link.clientMr, 0, 10, 0);
        Completions used = await(link.serverRecvCq, 1);
        assertStatus(SUCCESS, used.status[0]);
        link.clientQp.postSend(2, link.clientMr, 0, 10, SIGNALED);
        boolean refused = false;
        try {
            link.clientQp.postSend(3, link.clientMr, 0, 10, SIGNALED);
        } catch (FabricException e) {
            // A fabric that carries a send out as it is posted is in the error state already: it refuses the post.
            assertNamesState(e);
            refused = true;
        }
        Completions c = await(link.clientSendCq, refused ? 1 : 2);
        assertEquals(2, c.wrId[0], "the unsignaled success is silent");
        assertStatus(RNR_RETRY_EXC_ERR, c.status[0]);
        assertEquals(OP_SEND, c.opcode[0]);
        if (!refused) {
            assertEquals(3, c.wrId[1]);
            assertStatus(WR_FLUSH_ERR, c.status[1]);
        }
        CmEvent event = expect(link.clientEvents, CmEvent.Type.DISCONNECTED);
        CmEvent peer = expect(link.serverEvents, CmEvent.Type.DISCONNECTED);
        if (disconnectNamesTheFailure()) {
            assertTrue(event.reason().contains("receiver not ready"), event.reason());
        }
        if (peerLearnsTheFailure()) {
            assertTrue(peer.reason().contains("receiver not ready"), peer.reason());
        }
        assertTrue(link.clientQp.isError());
        assertTrue(link.serverQp.isError());
        if (clientBefore >= 0) {
            assertEquals(clientBefore + 1, receiverNotReadyCount(clientFabric()), "the sender's count");
        }
        if (serverBefore >= 0 && peerLearnsTheFailure()) {
            assertEquals(serverBefore + 1, receiverNotReadyCount(serverFabric()), "the receiver's count");
        }
        assertPostsRefused(link.clientQp, link.clientMr);
        assertPostsRefused(link.serverQp, link.serverMr);
    }

    @Test
    void aSendLargerThanThePostedReceiveFailsBothSides() throws IOException {
        Link link = connected(options().serverReceives(3, 100));
        link.clientQp.postSend(1, link.clientMr, 0, 101, SIGNALED);
        Completions r = await(link.serverRecvCq, 3);
        assertError(LOC_LEN_ERR, r.status[0]);
        assertEquals(1000, r.wrId[0]);
        for (int i = 1; i < 3; i++) {
            assertStatus(WR_FLUSH_ERR, r.status[i]);
            assertEquals(1000 + i, r.wrId[i]);
        }
        Completions s = await(link.clientSendCq, 1);
        assertError(REM_INV_REQ_ERR, s.status[0]);
        assertEquals(OP_SEND, s.opcode[0]);
        assertConnectionEnded(link);
    }

    @Test
    void aSendFromOutsideItsRegionIsALocalProtectionError() throws IOException {
        Link link = connected(options().serverReceives(4, 64));
        link.clientQp.postSend(5, link.clientMr, REGION - 10, 11, SIGNALED);
        Completions c = await(link.clientSendCq, 1);
        assertEquals(5, c.wrId[0]);
        assertError(LOC_PROT_ERR, c.status[0]);
        assertEquals(OP_SEND, c.opcode[0]);
        assertConnectionEnded(link);
        Completions r = await(link.serverRecvCq, 4);
        for (int i = 0; i < 4; i++) {
            assertStatus(WR_FLUSH_ERR, r.status[i]);
        }
    }

    @Test
    void aSendFromAnotherFabricsRegionIsALocalProtectionError() throws IOException {
        Link link = connected(options().serverReceives(1, 64));
        // Unsignaled: a request that fails completes all the same.
        link.clientQp.postSend(5, link.serverMr, 0, 10, 0);
        Completions c = await(link.clientSendCq, 1);
        assertError(LOC_PROT_ERR, c.status[0]);
        assertConnectionEnded(link);
    }

    @Test
    void aSendFromADeregisteredRegionIsALocalProtectionError() throws IOException {
        Link link = connected(options().serverReceives(1, 64));
        MemoryRegion extra = clientFabric().allocate(4096, MemoryRegion.LOCAL_WRITE);
        extra.close();
        link.clientQp.postSend(2, extra, 0, 8, SIGNALED);
        Completions c = await(link.clientSendCq, 1);
        assertError(LOC_PROT_ERR, c.status[0]);
        assertConnectionEnded(link);
    }

    @Test
    void aReceiveOutsideItsRegionIsRefused() throws IOException {
        assertReceiveRefused("[" + (REGION - 1) + ", ", link -> link.serverQp.postRecv(1, link.serverMr,
            REGION - 1, 2));
    }

    @Test
    void aReceiveIntoAnotherFabricsRegionIsRefused() throws IOException {
        assertReceiveRefused("not a region of this", link -> link.serverQp.postRecv(1, link.clientMr, 0, 64));
    }

    @Test
    void aReceiveIntoARegionWithoutLocalWriteIsRefused() throws IOException {
        assertReceiveRefused("LOCAL_WRITE", link -> link.serverQp.postRecv(1,
            serverFabric().allocate(4096, MemoryRegion.REMOTE_READ), 0, 64));
    }

    @Test
    void aReceiveIntoADeregisteredRegionIsRefused() throws IOException {
        assertReceiveRefused("deregistered", link -> {
            MemoryRegion gone = serverFabric().allocate(4096, MemoryRegion.LOCAL_WRITE);
            gone.close();
            link.serverQp.postRecv(1, gone, 0, 64);
        });
    }

    @Test
    void aSendBeforeTheConnectionIsEstablishedIsRefusedAndAReceiveIsNot() throws IOException {
        Link link = new Link(options());
        link.request(null);
        FabricException e = assertThrows(FabricException.class,
            () -> link.clientQp.postSend(1, link.clientMr, 0, 8, SIGNALED));
        assertTrue(e.getMessage().contains("not connected"), e.getMessage());
        link.clientQp.postRecv(1, link.clientMr, 0, 8);
    }

    @Test
    void postingOnAQueuePairInTheErrorStateThrows() throws IOException {
        Link link = connected(options().serverReceives(1, 64));
        link.server.disconnect();
        expect(link.clientEvents, CmEvent.Type.DISCONNECTED);
        expect(link.serverEvents, CmEvent.Type.DISCONNECTED);
        assertPostsRefused(link.clientQp, link.clientMr);
        assertPostsRefused(link.serverQp, link.serverMr);
    }

    @Test
    void postingOnAClosedQueuePairThrows() throws IOException {
        Link link = connected(options().serverReceives(1, 64));
        link.client.close();
        assertPostsRefused(link.clientQp, link.clientMr);
        expect(link.serverEvents, CmEvent.Type.DISCONNECTED);
        assertPostsRefused(link.serverQp, link.serverMr);
    }

    // ---- flush on teardown

    @Test
    void disconnectFlushesThePostedReceivesOfBothSidesInPostOrder() throws IOException {
        Link link = connected(options().serverReceives(5, 64));
        link.clientQp.postRecv(1, link.clientMr, 0, 64);
        link.clientQp.postRecv(2, link.clientMr, 64, 64);
        link.client.disconnect();
        expect(link.clientEvents, CmEvent.Type.DISCONNECTED);
        expect(link.serverEvents, CmEvent.Type.DISCONNECTED);
        Completions client = await(link.clientRecvCq, 2);
        for (int i = 0; i < 2; i++) {
            assertStatus(WR_FLUSH_ERR, client.status[i]);
            assertEquals(OP_RECV, client.opcode[i]);
            assertEquals(1 + i, client.wrId[i]);
            assertEquals(link.clientQp.qpNum(), client.qpNum[i]);
        }
        Completions server = await(link.serverRecvCq, 5);
        for (int i = 0; i < 5; i++) {
            assertStatus(WR_FLUSH_ERR, server.status[i]);
            assertEquals(1000 + i, server.wrId[i]);
        }
        assertEquals(0, link.poll(link.serverRecvCq), "each receive completes once");
        assertEquals(0, link.poll(link.clientRecvCq), "each receive completes once");
    }

    @Test
    void anErrorFlushesEveryRequestPostedAfterIt() throws IOException {
        Link link = connected(options().serverReceives(2, 64));
        link.clientQp.postRecv(7, link.clientMr, 0, 64);
        link.clientQp.postSend(1, link.clientMr, REGION - 1, 2, SIGNALED);
        boolean refused = false;
        try {
            link.clientQp.postSend(2, link.clientMr, 0, 1, SIGNALED);
        } catch (FabricException e) {
            // A fabric that carries a send out as it is posted is in the error state already: it refuses the post.
            assertNamesState(e);
            refused = true;
        }
        Completions c = await(link.clientSendCq, refused ? 1 : 2);
        assertError(LOC_PROT_ERR, c.status[0]);
        assertEquals(1, c.wrId[0]);
        if (!refused) {
            assertStatus(WR_FLUSH_ERR, c.status[1]);
            assertEquals(2, c.wrId[1]);
        }
        assertConnectionEnded(link);
        Completions r = await(link.clientRecvCq, 1);
        assertStatus(WR_FLUSH_ERR, r.status[0]);
        assertEquals(7, r.wrId[0]);
        Completions peer = await(link.serverRecvCq, 2);
        assertStatus(WR_FLUSH_ERR, peer.status[0]);
        assertStatus(WR_FLUSH_ERR, peer.status[1]);
    }

    // ---- notifiers

    @Test
    void anArmedReceiveQueueFiresOnceWhenASendArrives() throws Exception {
        Link link = connected(options().serverReceives(4, 64));
        Waiter waiter = new Waiter();
        link.serverRecvCq.requestNotify(waiter::signal);
        assertEquals(0, waiter.calls.get(), "nothing pending, nothing fired");
        link.clientQp.postSend(1, link.clientMr, 0, 8, 0);
        waiter.assertFired();
        link.clientQp.postSend(2, link.clientMr, 0, 8, SIGNALED);
        assertEquals(2, await(link.serverRecvCq, 2).count());
        await(link.clientSendCq, 1);
        assertEquals(1, waiter.calls.get(), "one-shot: not fired again without arming");
    }

    @Test
    void armingWithACompletionPendingFires() throws Exception {
        Link link = connected(options().serverReceives(4, 64));
        link.clientQp.postSend(1, link.clientMr, 0, 8, SIGNALED);
        await(link.serverRecvCq, 1);
        // The send's completion is pending on the client's queue, unpolled.
        awaitPending(link.clientSendCq);
        Waiter waiter = new Waiter();
        link.clientSendCq.requestNotify(waiter::signal);
        waiter.assertFired();
        assertEquals(1, await(link.clientSendCq, 1).count());
        assertEquals(1, waiter.calls.get());
    }

    @Test
    void anArmedSendQueueFiresForASignaledRequest() throws Exception {
        Link link = connected(options().serverReceives(4, 64));
        Waiter waiter = new Waiter();
        link.clientSendCq.requestNotify(waiter::signal);
        link.clientQp.postSend(1, link.clientMr, 0, 8, SIGNALED);
        waiter.assertFired();
        assertEquals(1, await(link.clientSendCq, 1).count());
    }

    @Test
    void anArmedEventChannelFiresOnceForAConnectRequest() throws Exception {
        Link link = new Link(options());
        Waiter waiter = new Waiter();
        link.serverEvents.requestNotify(waiter::signal);
        link.client.connect(link.listener.localAddress(), null);
        waiter.assertFired();
        expect(link.serverEvents, CmEvent.Type.CONNECT_REQUEST);
        assertEquals(1, waiter.calls.get());
    }

    @Test
    void aDisconnectWakesTheArmedEventChannelOfThePeer() throws Exception {
        Link link = connected(options());
        Waiter waiter = new Waiter();
        link.clientEvents.requestNotify(waiter::signal);
        link.server.disconnect();
        waiter.assertFired();
        expect(link.clientEvents, CmEvent.Type.DISCONNECTED);
    }

    // ---- what the cases share

    /** The suite's queue settings: completion queues of 64 entries, which every fabric's budget allows. */
    protected static QueueOptions options() {
        return new QueueOptions().cqEntries(64);
    }

    /**
     * A listener on the server's fabric and a client with its queue pair on the client's; each side has its own send
     * and receive completion queues and one region of {@link #REGION} bytes with local and remote write.
     */
    protected final class Link {
        final QueueOptions options;
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
        private final Completions out = new Completions(64);

        Link(QueueOptions options) throws IOException {
            this.options = options;
            Fabric s = serverFabric();
            Fabric c = clientFabric();
            serverEvents = s.createEventChannel();
            clientEvents = c.createEventChannel();
            listener = s.createId(serverEvents);
            listener.bind(new InetSocketAddress(listenAddress(), 0));
            listener.listen(8);
            clientSendCq = c.createCompletionQueue(options.cqEntries);
            clientRecvCq = c.createCompletionQueue(options.cqEntries);
            serverSendCq = s.createCompletionQueue(options.cqEntries);
            serverRecvCq = s.createCompletionQueue(options.cqEntries);
            int access = MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_WRITE;
            clientMr = c.allocate(REGION, access);
            serverMr = s.allocate(REGION, access);
            client = c.createId(clientEvents);
            clientQp = client.createQueuePair(config(clientSendCq, clientRecvCq));
        }

        QueuePair.Config config(CompletionQueue send, CompletionQueue recv) {
            return new QueuePair.Config(send, recv, options.sendWr, options.recvWr, 0);
        }

        /** Connects the client with {@code data}; the request's id is {@link #server}. */
        CmEvent request(ByteBuffer data) throws IOException {
            client.connect(listener.localAddress(), data);
            CmEvent request = expect(serverEvents, CmEvent.Type.CONNECT_REQUEST);
            server = request.id();
            return request;
        }

        int poll(CompletionQueue cq) throws IOException {
            return cq.poll(out);
        }
    }

    /** A connected link; the server posted {@code options.serverReceives} receives before accepting. */
    protected Link connected(QueueOptions options) throws IOException {
        Link link = new Link(options);
        link.request(null);
        link.serverQp = link.server.createQueuePair(link.config(link.serverSendCq, link.serverRecvCq));
        for (int i = 0; i < options.serverReceives; i++) {
            link.serverQp.postRecv(1000 + i, link.serverMr, i * options.serverReceiveSize,
                options.serverReceiveSize);
        }
        link.server.accept(null);
        expect(link.serverEvents, CmEvent.Type.ESTABLISHED);
        expect(link.clientEvents, CmEvent.Type.ESTABLISHED);
        return link;
    }

    /** A post that a case expects the fabric to refuse or fail. */
    @FunctionalInterface
    protected interface Post {
        void post(Link link) throws IOException;
    }

    /** Both queue pairs in error and DISCONNECTED on both sides: the connection ended. */
    private void assertConnectionEnded(Link link) throws IOException {
        expect(link.clientEvents, CmEvent.Type.DISCONNECTED);
        expect(link.serverEvents, CmEvent.Type.DISCONNECTED);
        assertTrue(link.clientQp.isError(), "the client's queue pair is in the error state");
        assertTrue(link.serverQp.isError(), "the server's queue pair is in the error state");
    }

    /**
     * A receive that breaks a rule of its region: refused at post with a message containing {@code rule} (the
     * software fabrics check at post time), or, as a device does, posted and failed with an error completion when a
     * message lands in it, which ends the connection.
     */
    private void assertReceiveRefused(String rule, Post receive) throws IOException {
        Link link = connected(options());
        try {
            receive.post(link);
        } catch (FabricException e) {
            assertTrue(e.getMessage().contains(rule), e.getMessage());
            assertFalse(link.serverQp.isError(), "a refused post leaves the queue pair usable");
            return;
        }
        link.clientQp.postSend(1, link.clientMr, 0, 8, SIGNALED);
        Completions r = await(link.serverRecvCq, 1);
        assertNotEquals(SUCCESS, r.status[0], "a message landed in a receive that broke its region's rules");
        Completions s = await(link.clientSendCq, 1);
        assertNotEquals(SUCCESS, s.status[0]);
        assertConnectionEnded(link);
    }

    /** Posting a send and a receive on {@code qp} throws, naming the queue pair's state. */
    private static void assertPostsRefused(QueuePair qp, MemoryRegion region) {
        FabricException send = assertThrows(FabricException.class, () -> qp.postSend(90, region, 0, 1, SIGNALED));
        assertNamesState(send);
        FabricException recv = assertThrows(FabricException.class, () -> qp.postRecv(91, region, 0, 1));
        assertNamesState(recv);
    }

    private static void assertNamesState(FabricException e) {
        String m = e.getMessage();
        assertTrue(m.contains("error state") || m.contains("destroyed"), m);
    }

    /** {@code actual} is the error {@code expected}, or one the fabric reports in its place ({@link #statusesFor}). */
    private void assertError(int expected, int actual) {
        Set<Integer> allowed = statusesFor(expected);
        if (!allowed.contains(actual)) {
            assertStatus(expected, actual);
        }
    }

    private static void assertStatus(int expected, int actual) {
        assertEquals(Completions.statusName(expected), Completions.statusName(actual));
    }

    private static void assertStatus(int expected, int actual, String message) {
        assertEquals(Completions.statusName(expected), Completions.statusName(actual), message);
    }

    /** The next event of {@code channel}, which must be of {@code type}. */
    protected static CmEvent expect(EventChannel channel, CmEvent.Type type) throws IOException {
        CmEvent event = next(channel);
        if (event.type() != type) {
            fail("expected " + type + " but got " + event.type() + " (" + event.reason() + ")");
        }
        return event;
    }

    /** The next event of {@code channel}, waiting through its notifier in bounded slices. */
    protected static CmEvent next(EventChannel channel) throws IOException {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        Semaphore signal = new Semaphore(0);
        for (;;) {
            CmEvent event = channel.poll();
            if (event != null) {
                return event;
            }
            if (System.nanoTime() - deadline > 0) {
                fail("no connection-manager event within " + TimeUnit.NANOSECONDS.toSeconds(TIMEOUT_NANOS) + " s");
            }
            channel.requestNotify(signal::release);
            acquireSlice(signal);
        }
    }

    /**
     * Polls until exactly {@code n} completions have arrived on {@code cq}, waiting through its notifier in bounded
     * slices; fails if a poll returns more.
     */
    protected static Completions await(CompletionQueue cq, int n) throws IOException {
        return CompletionWaits.awaitExactly(cq, n, TIMEOUT_NANOS);
    }

    /** Waits until arming {@code cq} finds a completion pending, without polling it. */
    private static void awaitPending(CompletionQueue cq) throws IOException {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        Semaphore signal = new Semaphore(0);
        do {
            cq.requestNotify(signal::release);
            if (acquireSlice(signal)) {
                return;
            }
        } while (System.nanoTime() - deadline < 0);
        fail("no completion became pending");
    }

    private static boolean acquireSlice(Semaphore signal) {
        try {
            return signal.tryAcquire(SLICE_NANOS, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting", e);
        }
    }

    /** A notifier that counts its calls and opens a latch. */
    private static final class Waiter {
        final AtomicInteger calls = new AtomicInteger();
        final CountDownLatch fired = new CountDownLatch(1);

        void signal() {
            calls.incrementAndGet();
            fired.countDown();
        }

        void assertFired() throws InterruptedException {
            assertTrue(fired.await(TIMEOUT_NANOS, TimeUnit.NANOSECONDS), "the armed notifier ran");
            assertEquals(1, calls.get(), "the notifier ran exactly once");
        }
    }

    protected static ByteBuffer ascii(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.US_ASCII));
    }

    protected static String ascii(ByteBuffer b) {
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    protected static void fill(MemoryRegion r, int offset, int length, int seed) {
        ByteBuffer b = r.buffer();
        for (int i = 0; i < length; i++) {
            b.put(offset + i, (byte) (seed * 31 + i * 7 + (i >>> 8)));
        }
    }

    protected static void check(MemoryRegion r, int offset, int length, int seed) {
        ByteBuffer b = r.buffer();
        for (int i = 0; i < length; i++) {
            byte expected = (byte) (seed * 31 + i * 7 + (i >>> 8));
            if (b.get(offset + i) != expected) {
                fail("byte " + i + " of message " + seed + " is " + b.get(offset + i) + ", expected " + expected);
            }
        }
    }
}
