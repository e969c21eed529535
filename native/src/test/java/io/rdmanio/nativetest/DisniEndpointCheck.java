package io.rdmanio.nativetest;

import com.ibm.disni.RdmaActiveEndpoint;
import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.RdmaServerEndpoint;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;

/**
 * End-to-end check of libdisni through DiSNI's endpoint API (RdmaActiveEndpointGroup), the
 * layer that runs its own CM-event and completion threads: a server endpoint accepts, a
 * client connects, and {@link #ROUNDS} messages of growing size are echoed byte-exact with
 * completions delivered by the group's completion thread. Then both sides close.
 *
 * <p>Usage: {@code DisniEndpointCheck ADDRESS [PORT]}; exits 0 when every check passed.
 *
 * <p>Threading: completions arrive on DiSNI's completion thread and are handed to the
 * endpoint's owner (server thread or main thread) through a blocking queue; all waits are
 * bounded by {@link #TIMEOUT_MS}.
 */
public final class DisniEndpointCheck {

    static final int TIMEOUT_MS = 60_000;
    static final int ROUNDS = 50;
    static final int SLOT = 8192;
    static final int RECV_SLOTS = 4;

    private DisniEndpointCheck() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: DisniEndpointCheck ADDRESS [PORT]");
            System.exit(64);
        }
        InetSocketAddress address = new InetSocketAddress(InetAddress.getByName(args[0]),
                args.length > 1 ? Integer.parseInt(args[1]) : 19756);
        long start = System.nanoTime();
        RdmaActiveEndpointGroup<EchoEndpoint> group = new RdmaActiveEndpointGroup<>(1000, false, 64, 2, 128);
        group.init((id, serverSide) -> new EchoEndpoint(group, id, serverSide));
        try {
            RdmaServerEndpoint<EchoEndpoint> server = group.createServerEndpoint();
            server.bind(address, 4);
            FutureTask<Void> serving = new FutureTask<>(() -> {
                serve(server);
                return null;
            });
            Thread serverThread = new Thread(serving, "disni-endpoint-server");
            serverThread.setDaemon(true);
            serverThread.start();

            EchoEndpoint client = group.createEndpoint();
            client.connect(address, 2000);
            if (!client.isConnected()) {
                throw new AssertionError("client endpoint not connected after connect()");
            }
            System.out.println("PASS [client] connected " + client.getSrcAddr() + " -> " + client.getDstAddr());
            for (int round = 0; round < ROUNDS; round++) {
                int length = lengthOf(round);
                DisniVerbsCheck.fillPattern(client.sendBuffer, 0, length, round);
                client.send(length);
                Completion echo = client.awaitRecv();
                echo.expectLength(length);
                DisniVerbsCheck.verifyPattern("echo " + round, client.recvBuffer, echo.slot() * SLOT, length, round);
                client.repost(echo.slot());
            }
            System.out.println("PASS [client] " + ROUNDS + " messages (1 B .. " + lengthOf(ROUNDS - 1)
                    + " B) echoed byte-exact through the endpoint API");
            client.close();
            serving.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            server.close();
        } catch (Throwable t) {
            System.out.println("FAIL " + t);
            t.printStackTrace(System.out);
            System.exit(1);
        }
        group.close();
        System.out.printf("PASS all endpoint checks in %.1f s%n", (System.nanoTime() - start) / 1e9);
    }

    static int lengthOf(int round) {
        return 1 + (int) ((long) round * (SLOT - 1) / (ROUNDS - 1));
    }

    private static void serve(RdmaServerEndpoint<EchoEndpoint> server) throws Exception {
        EchoEndpoint ep = server.accept();
        System.out.println("PASS [server] accepted " + ep.getSrcAddr() + " <- " + ep.getDstAddr());
        for (int round = 0; round < ROUNDS; round++) {
            Completion c = ep.awaitRecv();
            int length = lengthOf(round);
            c.expectLength(length);
            DisniVerbsCheck.verifyPattern("server round " + round, ep.recvBuffer, c.slot() * SLOT, length, round);
            for (int i = 0; i < length; i++) {
                ep.sendBuffer.put(i, ep.recvBuffer.get(c.slot() * SLOT + i));
            }
            ep.repost(c.slot());
            ep.send(length);
        }
        System.out.println("PASS [server] " + ROUNDS + " messages verified and echoed");
        ep.close();
    }

    /** One completion, copied out of the IbvWC DiSNI reuses. */
    record Completion(long wrId, int status, int opcode, int length) {
        static final long SEND_ID = -1;

        int slot() {
            return (int) wrId;
        }

        void expectLength(int expected) {
            if (length != expected) {
                throw new AssertionError("received " + length + " bytes, expected " + expected);
            }
        }
    }

    /** Endpoint with one send slot and {@link #RECV_SLOTS} receive slots, reposted as consumed. */
    static final class EchoEndpoint extends RdmaActiveEndpoint {
        final ByteBuffer sendBuffer = ByteBuffer.allocateDirect(SLOT);
        final ByteBuffer recvBuffer = ByteBuffer.allocateDirect(SLOT * RECV_SLOTS);
        final BlockingQueue<Completion> sends = new ArrayBlockingQueue<>(64);
        final BlockingQueue<Completion> recvs = new ArrayBlockingQueue<>(64);
        IbvMr sendMr;
        IbvMr recvMr;

        EchoEndpoint(RdmaActiveEndpointGroup<EchoEndpoint> group, RdmaCmId id, boolean serverSide)
                throws IOException {
            super(group, id, serverSide);
        }

        @Override
        protected synchronized void init() throws IOException {
            super.init();
            sendMr = registerMemory(sendBuffer).execute().free().getMr();
            recvMr = registerMemory(recvBuffer).execute().free().getMr();
            for (int slot = 0; slot < RECV_SLOTS; slot++) {
                repost(slot);
            }
        }

        @Override
        public void dispatchCqEvent(IbvWC wc) {
            Completion c = new Completion(wc.getWr_id(), wc.getStatus(), wc.getOpcode(), wc.getByte_len());
            boolean queued = c.opcode() == DisniVerbsCheck.WC_SEND ? sends.offer(c) : recvs.offer(c);
            if (!queued) {
                throw new IllegalStateException("completion queue overflow at " + c);
            }
        }

        void repost(int slot) throws IOException {
            IbvSge sge = new IbvSge();
            sge.setAddr(recvMr.getAddr() + (long) slot * SLOT);
            sge.setLength(SLOT);
            sge.setLkey(recvMr.getLkey());
            IbvRecvWR wr = new IbvRecvWR();
            wr.setWr_id(slot);
            wr.setSg_list(new LinkedList<>(List.of(sge)));
            wr.setNum_sge(1);
            postRecv(List.of(wr)).execute().free();
        }

        void send(int length) throws Exception {
            IbvSge sge = new IbvSge();
            sge.setAddr(sendMr.getAddr());
            sge.setLength(length);
            sge.setLkey(sendMr.getLkey());
            IbvSendWR wr = new IbvSendWR();
            wr.setWr_id(Completion.SEND_ID);
            wr.setOpcode(IbvSendWR.IBV_WR_SEND);
            wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
            wr.setSg_list(new LinkedList<>(List.of(sge)));
            wr.setNum_sge(1);
            postSend(List.of(wr)).execute().free();
            Completion done = take(sends, "send completion");
            if (done.wrId() != Completion.SEND_ID) {
                throw new AssertionError("send completion for " + done);
            }
        }

        Completion awaitRecv() throws InterruptedException {
            return take(recvs, "receive completion");
        }

        private Completion take(BlockingQueue<Completion> queue, String what) throws InterruptedException {
            Completion c = queue.poll(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            if (c == null) {
                throw new AssertionError((isServerSide() ? "server" : "client") + ": no " + what
                        + " within " + TIMEOUT_MS + " ms");
            }
            if (c.status() != IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal()) {
                throw new AssertionError(what + " failed: " + c);
            }
            return c;
        }
    }
}
