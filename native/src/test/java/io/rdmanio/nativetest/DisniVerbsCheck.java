package io.rdmanio.nativetest;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.SVCPollCq;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * End-to-end check of libdisni on a real verbs device, through DiSNI 2.1's own verbs API.
 *
 * <p>One JVM runs a server and a client thread that connect over rdma_cm on the given
 * address (an RDMA-capable interface, e.g. soft-RoCE), then: ping-pong messages of several
 * sizes byte-exact (including a two-segment send and two chained send requests), an RDMA
 * write with immediate data into a region the server advertised, an RDMA read of it back,
 * a disconnect seen by both sides, and an orderly teardown of every object. It also checks
 * that a failing call surfaces as an IOException naming the verb and the errno.
 *
 * <p>Usage: {@code DisniVerbsCheck ADDRESS [PORT]}; exits 0 when every check passed.
 *
 * <p>Threading: the server runs on its own thread, the client on the main thread; each owns
 * its endpoint exclusively. Every wait is bounded by {@link #TIMEOUT_MS}.
 */
public final class DisniVerbsCheck {

    static final int TIMEOUT_MS = 60_000;
    static final int SLOT = 4096;
    static final int SLOTS = 8;
    static final int[] SIZES = {1, 7, 64, 1000, 4096, 333};
    static final int WRITE_OFFSET = 100;
    static final int WRITE_LENGTH = 3000;
    static final int IMMEDIATE = 0x1234ABCD;
    static final int TARGET_SIZE = 8192;

    static final int WC_SEND = 0;
    static final int WC_RDMA_WRITE = 1;
    static final int WC_RDMA_READ = 2;
    static final int WC_RECV = 128;
    static final int WC_RECV_RDMA_WITH_IMM = 129;

    private DisniVerbsCheck() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: DisniVerbsCheck ADDRESS [PORT]");
            System.exit(64);
        }
        InetAddress address = InetAddress.getByName(args[0]);
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 19755;
        long start = System.nanoTime();
        try {
            checkErrorReporting(address);
            CountDownLatch listening = new CountDownLatch(1);
            FutureTask<Void> server = new FutureTask<>(() -> {
                runServer(new InetSocketAddress(address, port), listening);
                return null;
            });
            Thread serverThread = new Thread(server, "disni-check-server");
            serverThread.setDaemon(true);
            serverThread.start();
            if (!listening.await(TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                fail("server did not start listening");
            }
            if (server.isDone()) {
                server.get();
            }
            runClient(new InetSocketAddress(address, port));
            server.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            report(e.getCause());
            System.exit(1);
        } catch (TimeoutException e) {
            report(new AssertionError("server did not finish within " + TIMEOUT_MS + " ms", e));
            System.exit(1);
        } catch (Throwable t) {
            report(t);
            System.exit(1);
        }
        System.out.printf("PASS all checks in %.1f s%n", (System.nanoTime() - start) / 1e9);
    }

    private static void report(Throwable t) {
        System.out.println("FAIL " + t);
        t.printStackTrace(System.out);
    }

    static void fail(String message) {
        throw new AssertionError(message);
    }

    static void pass(String side, String what) {
        System.out.println("PASS [" + side + "] " + what);
    }

    /** A failing native call must throw an IOException that names the verb and the errno. */
    private static void checkErrorReporting(InetAddress address) throws IOException {
        RdmaEventChannel channel = RdmaEventChannel.createEventChannel();
        RdmaCmId id = channel.createId(RdmaCm.RDMA_PS_TCP);
        byte[] raw = address.getAddress();
        raw[3] = (byte) (raw[3] == (byte) 199 ? 198 : 199); // an address no interface owns
        try {
            id.bindAddr(new InetSocketAddress(InetAddress.getByAddress(raw), 0));
            fail("binding an address no interface owns succeeded");
        } catch (IOException expected) {
            String message = String.valueOf(expected.getMessage());
            if (!message.startsWith("rdma_bind_addr: ") || !message.contains("errno ")) {
                fail("unhelpful error message: " + message);
            }
            pass("main", "bind failure reported as IOException: " + message);
        }
        expectZero("destroyId", id.destroyId());
        expectZero("destroyEventChannel", channel.destroyEventChannel());
    }

    static void expectZero(String what, int result) {
        if (result != 0) {
            fail(what + " returned " + result);
        }
    }

    static byte patternByte(int message, int index) {
        return (byte) ((message * 31 + index * 7) ^ 0x5A);
    }

    static void fillPattern(ByteBuffer buffer, int offset, int length, int message) {
        for (int i = 0; i < length; i++) {
            buffer.put(offset + i, patternByte(message, i));
        }
    }

    static void verifyPattern(String what, ByteBuffer buffer, int offset, int length, int message) {
        for (int i = 0; i < length; i++) {
            byte expected = patternByte(message, i);
            byte actual = buffer.get(offset + i);
            if (actual != expected) {
                fail(what + ": byte " + i + " is " + actual + ", expected " + expected);
            }
        }
    }

    static RdmaCmEvent expectEvent(RdmaEventChannel channel, RdmaCmEvent.EventType type) throws IOException {
        RdmaCmEvent event = channel.getCmEvent(TIMEOUT_MS);
        if (event == null) {
            fail("no CM event within " + TIMEOUT_MS + " ms, expected " + type);
        }
        int actual = event.getEvent();
        event.ackEvent();
        if (actual != type.ordinal()) {
            fail("CM event " + RdmaCmEvent.EventType.values()[actual] + ", expected " + type);
        }
        return event;
    }

    // ------------------------------------------------------------------------------------

    private static void runServer(InetSocketAddress address, CountDownLatch listening) throws Exception {
        RdmaEventChannel channel = RdmaEventChannel.createEventChannel();
        RdmaCmId listenId = channel.createId(RdmaCm.RDMA_PS_TCP);
        listenId.bindAddr(address);
        listenId.listen(4);
        listening.countDown();
        RdmaCmEvent request = expectEvent(channel, RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST);
        RdmaCmId id = request.getConnIdPriv();
        if (id == null || id == listenId) {
            fail("connect request did not carry a new CM id");
        }
        Endpoint ep = new Endpoint("server", id);
        ByteBuffer targetBuffer = ByteBuffer.allocateDirect(TARGET_SIZE);
        IbvMr target = ep.register(targetBuffer,
                IbvMr.IBV_ACCESS_LOCAL_WRITE | IbvMr.IBV_ACCESS_REMOTE_WRITE | IbvMr.IBV_ACCESS_REMOTE_READ);
        RdmaConnParam param = new RdmaConnParam();
        param.setRnr_retry_count((byte) 7);
        id.accept(param);
        expectEvent(channel, RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED);
        checkAddresses("server", id, address);
        pass("server", "accepted a connection, QP " + ep.qp.getQp_num());

        // Advertise the write target.
        ByteBuffer advert = ep.sendSlot(0);
        advert.putLong(0, target.getAddr());
        advert.putInt(8, target.getRkey());
        advert.putInt(12, TARGET_SIZE);
        ep.awaitSend(ep.postSend(0, 16));

        // Echo every message back, verifying it first.
        for (int m = 0; m < SIZES.length; m++) {
            Completion c = ep.awaitRecv();
            c.expect(WC_RECV, SIZES[m]);
            int slot = (int) c.wrId;
            verifyPattern("server message " + m, ep.recvBuffer, slot * SLOT, SIZES[m], m);
            ByteBuffer out = ep.sendSlot(1);
            for (int i = 0; i < SIZES[m]; i++) {
                out.put(i, ep.recvBuffer.get(slot * SLOT + i));
            }
            ep.postRecv(slot);
            ep.awaitSend(ep.postSend(1, SIZES[m]));
        }
        pass("server", SIZES.length + " messages received byte-exact and echoed");

        // The client's RDMA write with immediate consumes a receive and lands in the target.
        Completion write = ep.awaitRecv();
        write.expect(WC_RECV_RDMA_WITH_IMM, WRITE_LENGTH);
        if (write.imm != IMMEDIATE) {
            fail("immediate data is " + Integer.toHexString(write.imm) + ", expected "
                    + Integer.toHexString(IMMEDIATE));
        }
        verifyPattern("rdma write target", targetBuffer, WRITE_OFFSET, WRITE_LENGTH, 99);
        ep.postRecv((int) write.wrId);
        pass("server", "RDMA write with immediate landed byte-exact, imm 0x" + Integer.toHexString(write.imm));
        ep.sendSlot(0).put(0, (byte) 1);
        ep.awaitSend(ep.postSend(0, 1));

        expectEvent(channel, RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED);
        pass("server", "saw the client disconnect");
        ep.close();
        expectZero("destroyId(listen)", listenId.destroyId());
        expectZero("destroyEventChannel", channel.destroyEventChannel());
        pass("server", "tore down every object");
    }

    private static void runClient(InetSocketAddress address) throws Exception {
        RdmaEventChannel channel = RdmaEventChannel.createEventChannel();
        RdmaCmId id = channel.createId(RdmaCm.RDMA_PS_TCP);
        id.resolveAddr(null, address, 2000);
        expectEvent(channel, RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_RESOLVED);
        id.resolveRoute(2000);
        expectEvent(channel, RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_RESOLVED);
        Endpoint ep = new Endpoint("client", id);
        ByteBuffer readBack = ByteBuffer.allocateDirect(TARGET_SIZE);
        IbvMr readMr = ep.register(readBack, IbvMr.IBV_ACCESS_LOCAL_WRITE);
        RdmaConnParam param = new RdmaConnParam();
        param.setRetry_count((byte) 7);
        param.setRnr_retry_count((byte) 7);
        id.connect(param);
        expectEvent(channel, RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED);
        pass("client", "connected, QP " + ep.qp.getQp_num() + ", device context fd "
                + ep.context.getCmd_fd() + ", " + ep.context.getNumCompVectors() + " completion vector(s)");
        checkAddresses("client", id, null);
        if (!address.equals(id.getDestination())) {
            fail("client destination " + id.getDestination() + ", expected " + address);
        }

        Completion advert = ep.awaitRecv();
        advert.expect(WC_RECV, 16);
        int advertSlot = (int) advert.wrId;
        long remoteAddress = ep.recvBuffer.getLong(advertSlot * SLOT);
        int remoteKey = ep.recvBuffer.getInt(advertSlot * SLOT + 8);
        ep.postRecv(advertSlot);

        for (int m = 0; m < SIZES.length; m++) {
            if (m == 3) {
                // Two messages in one post, as a chained list of work requests.
                fillPattern(ep.sendSlot(2), 0, SIZES[3], 3);
                fillPattern(ep.sendSlot(3), 0, SIZES[4], 4);
                List<Long> ids = ep.postSendChain(new int[] {2, 3}, new int[] {SIZES[3], SIZES[4]});
                for (long wrId : ids) {
                    ep.awaitSend(wrId);
                }
                for (int k = 3; k <= 4; k++) {
                    expectEcho(ep, k);
                }
                m = 4;
                continue;
            }
            fillPattern(ep.sendSlot(1), 0, SIZES[m], m);
            long wrId = m == 2 ? ep.postSendTwoSegments(1, SIZES[m]) : ep.postSend(1, SIZES[m]);
            ep.awaitSend(wrId);
            expectEcho(ep, m);
        }
        pass("client", SIZES.length + " messages echoed byte-exact (incl. a 2-SGE send and a 2-WR chain)");

        // RDMA write with immediate into the server's advertised region.
        ByteBuffer source = ep.sendSlot(4);
        fillPattern(source, 0, WRITE_LENGTH, 99);
        ep.awaitCompletion(ep.postRdma(IbvSendWR.IBV_WR_RDMA_WRITE_WITH_IMM, ep.sendMr, 4 * SLOT, WRITE_LENGTH,
                remoteAddress + WRITE_OFFSET, remoteKey, IMMEDIATE), WC_RDMA_WRITE);
        Completion verdict = ep.awaitRecv();
        verdict.expect(WC_RECV, 1);
        if (ep.recvBuffer.get((int) verdict.wrId * SLOT) != 1) {
            fail("server did not confirm the RDMA write");
        }
        ep.postRecv((int) verdict.wrId);
        pass("client", "RDMA write with immediate confirmed by the server");

        // Read the same bytes back with an RDMA read.
        Completion read = ep.awaitCompletion(ep.postRdma(IbvSendWR.IBV_WR_RDMA_READ, readMr, 0, WRITE_LENGTH,
                remoteAddress + WRITE_OFFSET, remoteKey, 0), WC_RDMA_READ);
        verifyPattern("rdma read", readBack, 0, WRITE_LENGTH, 99);
        pass("client", "RDMA read returned the written bytes (" + read.byteLen + " bytes)");

        expectZero("disconnect", id.disconnect());
        expectEvent(channel, RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED);
        pass("client", "disconnected");
        ep.close();
        expectZero("destroyEventChannel", channel.destroyEventChannel());
        pass("client", "tore down every object");
    }

    private static void expectEcho(Endpoint ep, int m) {
        Completion c = ep.awaitRecv();
        c.expect(WC_RECV, SIZES[m]);
        verifyPattern("echo of message " + m, ep.recvBuffer, (int) c.wrId * SLOT, SIZES[m], m);
        ep.postRecv((int) c.wrId);
    }

    private static void checkAddresses(String side, RdmaCmId id, InetSocketAddress expectedSource)
            throws IOException {
        InetSocketAddress source = (InetSocketAddress) id.getSource();
        InetSocketAddress destination = (InetSocketAddress) id.getDestination();
        if (expectedSource != null && !expectedSource.equals(source)) {
            fail(side + " source " + source + ", expected " + expectedSource);
        }
        if (source.getPort() == 0 || destination.getPort() == 0) {
            fail(side + " addresses lack ports: " + source + " -> " + destination);
        }
        pass(side, "addresses " + source + " -> " + destination);
    }

    /** One work completion, copied out of DiSNI's reusable IbvWC. */
    static final class Completion {
        final long wrId;
        final int status;
        final int opcode;
        final int byteLen;
        final int imm;

        Completion(IbvWC wc) {
            this.wrId = wc.getWr_id();
            this.status = wc.getStatus();
            this.opcode = wc.getOpcode();
            this.byteLen = wc.getByte_len();
            this.imm = wc.getImm_data();
        }

        void expect(int expectedOpcode, int expectedLength) {
            if (opcode != expectedOpcode || byteLen != expectedLength) {
                fail("completion " + this + ", expected opcode " + expectedOpcode + " length " + expectedLength);
            }
        }

        @Override
        public String toString() {
            return "{wr_id=" + wrId + " status=" + status + " opcode=" + opcode + " len=" + byteLen + "}";
        }
    }

    /** A connected endpoint: PD, completion channel, one CQ for both queues, QP, buffers. */
    static final class Endpoint {
        static final long SEND_ID_BASE = 1L << 32;

        final String side;
        final RdmaCmId id;
        final IbvContext context;
        final IbvPd pd;
        final IbvCompChannel compChannel;
        final IbvCQ cq;
        final IbvQP qp;
        final ByteBuffer recvBuffer = ByteBuffer.allocateDirect(SLOTS * SLOT).order(ByteOrder.nativeOrder());
        final ByteBuffer sendBuffer = ByteBuffer.allocateDirect(SLOTS * SLOT).order(ByteOrder.nativeOrder());
        final IbvMr recvMr;
        final IbvMr sendMr;
        final List<IbvMr> mrs = new ArrayList<>();
        final IbvWC[] wcs = {new IbvWC()};
        final SVCPollCq poll;
        final LinkedList<Completion> pending = new LinkedList<>();
        long nextSendId = SEND_ID_BASE;

        Endpoint(String side, RdmaCmId id) throws IOException {
            this.side = side;
            this.id = id;
            this.context = id.getVerbs();
            this.pd = context.allocPd();
            this.compChannel = context.createCompChannel();
            this.cq = context.createCQ(compChannel, 64, 0);
            IbvQPInitAttr attr = new IbvQPInitAttr();
            attr.cap().setMax_send_wr(32);
            attr.cap().setMax_recv_wr(32);
            attr.cap().setMax_send_sge(2);
            attr.cap().setMax_recv_sge(1);
            attr.cap().setMax_inline_data(0);
            attr.setQp_type(IbvQP.IBV_QPT_RC);
            attr.setSend_cq(cq);
            attr.setRecv_cq(cq);
            this.qp = id.createQP(pd, attr);
            if (qp == null) {
                fail(side + ": createQP returned null");
            }
            this.recvMr = register(recvBuffer, IbvMr.IBV_ACCESS_LOCAL_WRITE);
            this.sendMr = register(sendBuffer, IbvMr.IBV_ACCESS_LOCAL_WRITE);
            this.poll = cq.poll(wcs, 1);
            for (int slot = 0; slot < SLOTS; slot++) {
                postRecv(slot);
            }
        }

        IbvMr register(ByteBuffer buffer, int access) throws IOException {
            IbvMr mr = pd.regMr(buffer, access).execute().free().getMr();
            if (mr.getLength() != buffer.capacity() || mr.getLkey() == 0 && mr.getRkey() == 0) {
                fail(side + ": odd memory region " + mr.getLength() + " bytes, lkey " + mr.getLkey());
            }
            mrs.add(mr);
            return mr;
        }

        ByteBuffer sendSlot(int slot) {
            return sendBuffer.duplicate().order(ByteOrder.nativeOrder()).position(slot * SLOT).slice()
                    .order(ByteOrder.nativeOrder());
        }

        void postRecv(int slot) {
            IbvSge sge = new IbvSge();
            sge.setAddr(recvMr.getAddr() + (long) slot * SLOT);
            sge.setLength(SLOT);
            sge.setLkey(recvMr.getLkey());
            IbvRecvWR wr = new IbvRecvWR();
            wr.setWr_id(slot);
            wr.setSg_list(new LinkedList<>(List.of(sge)));
            wr.setNum_sge(1);
            try {
                qp.postRecv(List.of(wr), null).execute().free();
            } catch (IOException e) {
                throw new AssertionError(side + ": postRecv failed", e);
            }
        }

        private IbvSendWR sendWr(int opcode, List<IbvSge> sges) {
            IbvSendWR wr = new IbvSendWR();
            wr.setWr_id(nextSendId++);
            wr.setOpcode(opcode);
            wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
            wr.setSg_list(new LinkedList<>(sges));
            wr.setNum_sge(sges.size());
            return wr;
        }

        private IbvSge sge(IbvMr mr, long offset, int length) {
            IbvSge sge = new IbvSge();
            sge.setAddr(mr.getAddr() + offset);
            sge.setLength(length);
            sge.setLkey(mr.getLkey());
            return sge;
        }

        long postSend(int slot, int length) throws IOException {
            IbvSendWR wr = sendWr(IbvSendWR.IBV_WR_SEND, List.of(sge(sendMr, (long) slot * SLOT, length)));
            qp.postSend(List.of(wr), null).execute().free();
            return wr.getWr_id();
        }

        long postSendTwoSegments(int slot, int length) throws IOException {
            int first = length / 3;
            IbvSendWR wr = sendWr(IbvSendWR.IBV_WR_SEND, List.of(sge(sendMr, (long) slot * SLOT, first),
                    sge(sendMr, (long) slot * SLOT + first, length - first)));
            qp.postSend(List.of(wr), null).execute().free();
            return wr.getWr_id();
        }

        List<Long> postSendChain(int[] slots, int[] lengths) throws IOException {
            List<IbvSendWR> wrs = new ArrayList<>();
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < slots.length; i++) {
                IbvSendWR wr = sendWr(IbvSendWR.IBV_WR_SEND, List.of(sge(sendMr, (long) slots[i] * SLOT, lengths[i])));
                wrs.add(wr);
                ids.add(wr.getWr_id());
            }
            qp.postSend(wrs, null).execute().free();
            return ids;
        }

        long postRdma(int opcode, IbvMr local, long offset, int length, long remoteAddress, int rkey, int imm)
                throws IOException {
            IbvSendWR wr = sendWr(opcode, List.of(sge(local, offset, length)));
            wr.getRdma().setRemote_addr(remoteAddress);
            wr.getRdma().setRkey(rkey);
            wr.setImm_data(imm);
            qp.postSend(List.of(wr), null).execute().free();
            return wr.getWr_id();
        }

        void awaitSend(long wrId) {
            awaitCompletion(wrId, WC_SEND);
        }

        Completion awaitCompletion(long wrId, int opcode) {
            Completion c = await(x -> x.wrId == wrId);
            if (c.opcode != opcode) {
                fail(side + ": completion " + c + ", expected opcode " + opcode);
            }
            return c;
        }

        Completion awaitRecv() {
            return await(x -> x.wrId < SEND_ID_BASE);
        }

        /**
         * Returns the first completion matching the filter, keeping others for later calls.
         * Sleeps on the completion channel between polls; fails on an error status.
         */
        Completion await(java.util.function.Predicate<Completion> filter) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
            try {
                for (;;) {
                    for (Iterator<Completion> it = pending.iterator(); it.hasNext();) {
                        Completion c = it.next();
                        if (filter.test(c)) {
                            it.remove();
                            return c;
                        }
                    }
                    if (drain() > 0) {
                        continue;
                    }
                    cq.reqNotification(false).execute().free();
                    if (drain() > 0) {
                        continue; // arrived between the empty poll and the re-arm
                    }
                    long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                    if (left <= 0) {
                        fail(side + ": no matching completion within " + TIMEOUT_MS + " ms");
                    }
                    if (compChannel.getCqEvent(cq, (int) Math.min(left, Integer.MAX_VALUE))) {
                        expectZero("ackEvents", cq.ackEvents(1));
                    }
                }
            } catch (IOException e) {
                throw new AssertionError(side + ": waiting for a completion failed", e);
            }
        }

        private int drain() throws IOException {
            int got = 0;
            while (poll.execute().getPolls() > 0) {
                Completion c = new Completion(wcs[0]);
                if (c.status != IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal()) {
                    fail(side + ": completion with error status " + c);
                }
                pending.add(c);
                got++;
            }
            return got;
        }

        void close() throws Exception {
            expectZero(side + " destroyQP", id.destroyQP());
            for (IbvMr mr : mrs) {
                mr.deregMr().execute().free();
            }
            poll.free();
            expectZero(side + " destroyCQ", cq.destroyCQ());
            expectZero(side + " destroyCompChannel", compChannel.destroyCompChannel());
            expectZero(side + " deallocPd", pd.deallocPd());
            expectZero(side + " destroyId", id.destroyId());
        }
    }
}
