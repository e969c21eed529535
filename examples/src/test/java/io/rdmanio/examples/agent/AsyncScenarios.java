package io.rdmanio.examples.agent;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousChannelGroup;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.CompletionHandler;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * NIO.2 scenarios, written once: each prints one line of what a program sees (results, exception classes, never
 * times or ports). {@link AsyncConformanceTest} runs this program on the JDK alone and through the agent, and
 * requires the same lines. Every wait is bounded.
 *
 * <p>Arguments: scenario names to run (none: all).
 */
public final class AsyncScenarios {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    private static final long GUARD_SECONDS = 20;
    /**
     * Threads of their own for the clients and readers a scenario runs beside it: the common pool has one worker
     * on a 2-core machine, and a task blocked there in {@code get} runs queued tasks inside itself (a reader inside
     * the writer it waits for), which would stall the scenario whatever the channels do.
     */
    private static final java.util.concurrent.ExecutorService WORKERS =
        java.util.concurrent.Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "scenario-worker");
            t.setDaemon(true);
            return t;
        });


    public static void main(String[] args) throws Exception {
        Map<String, ScenarioRunner.Scenario> all = new LinkedHashMap<>();
        all.put("echoWithHandlers", AsyncScenarios::echoWithHandlers);
        all.put("echoManyAtOnce", AsyncScenarios::echoManyAtOnce);
        all.put("futures", AsyncScenarios::futures);
        all.put("readTimeout", AsyncScenarios::readTimeout);
        all.put("readPending", AsyncScenarios::readPending);
        all.put("closeWhileReading", AsyncScenarios::closeWhileReading);
        all.put("peerCloses", AsyncScenarios::peerCloses);
        all.put("shutdownOutput", AsyncScenarios::shutdownOutput);
        all.put("notYetConnected", AsyncScenarios::notYetConnected);
        all.put("connectRefused", AsyncScenarios::connectRefused);
        all.put("connectRefusedInAFixedGroup", AsyncScenarios::connectRefusedInAFixedGroup);
        all.put("cancelRead", AsyncScenarios::cancelRead);
        all.put("acceptPending", AsyncScenarios::acceptPending);
        all.put("closeWhileAccepting", AsyncScenarios::closeWhileAccepting);
        all.put("fixedGroup", AsyncScenarios::fixedGroup);
        all.put("groupShutdownNow", AsyncScenarios::groupShutdownNow);
        all.put("addressesAndOptions", AsyncScenarios::addressesAndOptions);
        all.put("scatterGather", AsyncScenarios::scatterGather);
        all.put("zeroLength", AsyncScenarios::zeroLength);
        all.put("nioClientToAsyncServer", AsyncScenarios::nioClientToAsyncServer);
        all.put("asyncClientToNioServer", AsyncScenarios::asyncClientToNioServer);
        all.put("socketToAsyncServer", AsyncScenarios::socketToAsyncServer);
        all.put("boundBeforeConnect", AsyncScenarios::boundBeforeConnect);
        all.put("optionsAndSecondBind", AsyncScenarios::optionsAndSecondBind);
        all.put("resetAndShutdowns", AsyncScenarios::resetAndShutdowns);
        all.put("argumentErrors", AsyncScenarios::argumentErrors);
        all.put("resetWithReadAndWriteWaiting", AsyncScenarios::resetWithReadAndWriteWaiting);
        all.put("acceptAfterCancel", AsyncScenarios::acceptAfterCancel);
        ScenarioRunner.run(all, args, AsyncScenarios::describe);
    }

    static String describe(Throwable t) {
        if (t instanceof ExecutionException && t.getCause() != null) {
            return "ExecutionException(" + describe(t.getCause()) + ")";
        }
        return t.getClass().getName();
    }

    /** A handler whose outcome a future holds. */
    static final class Outcome<V> extends CompletableFuture<V> implements CompletionHandler<V, Object> {
        @Override
        public void completed(V result, Object attachment) {
            complete(result);
        }

        @Override
        public void failed(Throwable exc, Object attachment) {
            completeExceptionally(exc);
        }

        String await() {
            try {
                return "completed " + get(GUARD_SECONDS, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                return "failed " + describe(e.getCause());
            } catch (Exception e) {
                return "no outcome: " + describe(e);
            }
        }
    }

    private static AsynchronousServerSocketChannel server() throws IOException {
        return AsynchronousServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0));
    }

    /** A connected client and the server's end of it. */
    private record Pair(AsynchronousSocketChannel client, AsynchronousSocketChannel accepted) implements AutoCloseable {
        static Pair open(AsynchronousServerSocketChannel ss) throws Exception {
            Future<AsynchronousSocketChannel> a = ss.accept();
            AsynchronousSocketChannel c = AsynchronousSocketChannel.open();
            c.connect(ss.getLocalAddress()).get(GUARD_SECONDS, TimeUnit.SECONDS);
            return new Pair(c, a.get(GUARD_SECONDS, TimeUnit.SECONDS));
        }

        @Override
        public void close() throws IOException {
            client.close();
            accepted.close();
        }
    }

    private static void writeAll(AsynchronousSocketChannel ch, ByteBuffer b) throws Exception {
        while (b.hasRemaining()) {
            ch.write(b).get(GUARD_SECONDS, TimeUnit.SECONDS);
        }
    }

    private static byte[] readUntilEnd(AsynchronousSocketChannel ch) throws Exception {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        ByteBuffer b = ByteBuffer.allocate(64 * 1024);
        for (;;) {
            b.clear();
            int n = ch.read(b).get(GUARD_SECONDS, TimeUnit.SECONDS);
            if (n < 0) {
                return out.toByteArray();
            }
            out.write(b.array(), 0, n);
        }
    }

    /** The server echoes with a chain of completion handlers; the client sends 1 MiB and reads it back. */
    static String echoWithHandlers() throws Exception {
        return echo(1, 1 << 20);
    }

    /** The same with eight clients at once, 256 KiB each: completions of many channels interleave. */
    static String echoManyAtOnce() throws Exception {
        return echo(8, 256 * 1024);
    }

    private static String echo(int clients, int bytes) throws Exception {
        try (AsynchronousServerSocketChannel ss = server()) {
            serveEcho(ss);
            List<CompletableFuture<String>> results = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                int seed = i;
                results.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return echoClient(ss, bytes, seed);
                    } catch (Exception e) {
                        return describe(e);
                    }
                }, WORKERS));
            }
            java.util.Set<String> distinct = new java.util.TreeSet<>();
            for (CompletableFuture<String> r : results) {
                distinct.add(r.get(GUARD_SECONDS, TimeUnit.SECONDS));
            }
            return clients + " clients: " + String.join(" | ", distinct);
        }
    }

    /** Accepts for ever (each accept handler arms the next), echoing each connection until its end of stream. */
    private static void serveEcho(AsynchronousServerSocketChannel ss) {
        ss.accept(null, new CompletionHandler<AsynchronousSocketChannel, Object>() {
            @Override
            public void completed(AsynchronousSocketChannel ch, Object att) {
                ss.accept(null, this);
                ByteBuffer buf = ByteBuffer.allocateDirect(16 * 1024);
                ch.read(buf, null, new CompletionHandler<Integer, Object>() {
                    @Override
                    public void completed(Integer n, Object a) {
                        if (n < 0) {
                            try {
                                ch.shutdownOutput();
                            } catch (IOException e) {
                                System.out.println("echo server: " + describe(e));
                            }
                            return;
                        }
                        buf.flip();
                        CompletionHandler<Integer, Object> reader = this;
                        ch.write(buf, null, new CompletionHandler<Integer, Object>() {
                            @Override
                            public void completed(Integer w, Object a2) {
                                if (buf.hasRemaining()) {
                                    ch.write(buf, null, this);
                                } else {
                                    buf.clear();
                                    ch.read(buf, null, reader);
                                }
                            }

                            @Override
                            public void failed(Throwable exc, Object a2) {
                                System.out.println("echo server write: " + describe(exc));
                            }
                        });
                    }

                    @Override
                    public void failed(Throwable exc, Object a) {
                        System.out.println("echo server read: " + describe(exc));
                    }
                });
            }

            @Override
            public void failed(Throwable exc, Object att) {
                if (!(exc instanceof java.nio.channels.AsynchronousCloseException)) {
                    System.out.println("echo server accept: " + describe(exc));
                }
            }
        });
    }

    private static String echoClient(AsynchronousServerSocketChannel ss, int bytes, int seed) throws Exception {
        try (AsynchronousSocketChannel c = AsynchronousSocketChannel.open()) {
            c.connect(ss.getLocalAddress()).get(GUARD_SECONDS, TimeUnit.SECONDS);
            byte[] data = new byte[bytes];
            new java.util.Random(seed).nextBytes(data);
            CompletableFuture<byte[]> back = CompletableFuture.supplyAsync(() -> {
                try {
                    return readUntilEnd(c);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, WORKERS);
            writeAll(c, ByteBuffer.wrap(data));
            c.shutdownOutput();
            byte[] got = back.get(GUARD_SECONDS, TimeUnit.SECONDS);
            return got.length + " bytes, same: " + (crc(got) == crc(data));
        }
    }

    private static long crc(byte[] b) {
        CRC32 c = new CRC32();
        c.update(b);
        return c.getValue();
    }

    static String futures() throws Exception {
        try (AsynchronousServerSocketChannel ss = server(); Pair p = Pair.open(ss)) {
            int w = p.client().write(ByteBuffer.wrap("hello".getBytes(StandardCharsets.US_ASCII)))
                .get(GUARD_SECONDS, TimeUnit.SECONDS);
            ByteBuffer in = ByteBuffer.allocate(5);
            while (in.hasRemaining()) {
                p.accepted().read(in).get(GUARD_SECONDS, TimeUnit.SECONDS);
            }
            return "wrote " + w + ", read " + new String(in.array(), StandardCharsets.US_ASCII);
        }
    }

    static String readTimeout() throws Exception {
        try (AsynchronousServerSocketChannel ss = server(); Pair p = Pair.open(ss)) {
            Outcome<Integer> o = new Outcome<>();
            p.client().read(ByteBuffer.allocate(10), 200, TimeUnit.MILLISECONDS, null, o);
            String first = o.await();
            String second;
            try {
                p.client().read(ByteBuffer.allocate(10));
                second = "read allowed";
            } catch (RuntimeException e) {
                second = describe(e) + " " + e.getMessage();
            }
            // Writing is not affected.
            int w = p.client().write(ByteBuffer.wrap(new byte[3])).get(GUARD_SECONDS, TimeUnit.SECONDS);
            return first + "; then " + second + "; write still works: " + w + "; open " + p.client().isOpen();
        }
    }

    static String readPending() throws Exception {
        try (AsynchronousServerSocketChannel ss = server(); Pair p = Pair.open(ss)) {
            Future<Integer> first = p.client().read(ByteBuffer.allocate(10));
            String second;
            try {
                p.client().read(ByteBuffer.allocate(10));
                second = "second read accepted";
            } catch (RuntimeException e) {
                second = describe(e);
            }
            p.accepted().write(ByteBuffer.wrap(new byte[4])).get(GUARD_SECONDS, TimeUnit.SECONDS);
            return second + "; first read " + first.get(GUARD_SECONDS, TimeUnit.SECONDS);
        }
    }

    static String closeWhileReading() throws Exception {
        try (AsynchronousServerSocketChannel ss = server(); Pair p = Pair.open(ss)) {
            Outcome<Integer> o = new Outcome<>();
            p.client().read(ByteBuffer.allocate(10), null, o);
            Thread.sleep(200);
            p.client().close();
            String after;
            Outcome<Integer> again = new Outcome<>();
            p.client().read(ByteBuffer.allocate(10), null, again);
            after = again.await();
            Future<Integer> peer = p.accepted().read(ByteBuffer.allocate(10));
            return o.await() + "; read after close " + after + "; peer reads " + peer.get(GUARD_SECONDS,
                TimeUnit.SECONDS);
        }
    }

    static String peerCloses() throws Exception {
        try (AsynchronousServerSocketChannel ss = server(); Pair p = Pair.open(ss)) {
            writeAll(p.accepted(), ByteBuffer.wrap(new byte[] {1, 2, 3}));
            p.accepted().close();
            byte[] got = readUntilEnd(p.client());
            return "read " + got.length + " then -1, again " + p.client().read(ByteBuffer.allocate(4))
                .get(GUARD_SECONDS, TimeUnit.SECONDS);
        }
    }

    static String shutdownOutput() throws Exception {
        try (AsynchronousServerSocketChannel ss = server(); Pair p = Pair.open(ss)) {
            p.client().shutdownOutput();
            int peer = p.accepted().read(ByteBuffer.allocate(4)).get(GUARD_SECONDS, TimeUnit.SECONDS);
            Outcome<Integer> w = new Outcome<>();
            p.client().write(ByteBuffer.wrap(new byte[2]), null, w);
            p.client().shutdownInput();
            int own = p.client().read(ByteBuffer.allocate(4)).get(GUARD_SECONDS, TimeUnit.SECONDS);
            return "peer reads " + peer + "; write after shutdown " + w.await() + "; read after shutdownInput " + own;
        }
    }

    static String notYetConnected() throws Exception {
        try (AsynchronousSocketChannel c = AsynchronousSocketChannel.open()) {
            String r = ScenarioRunner.attempt(() -> c.read(ByteBuffer.allocate(1)) == null ? "null" : null,
                "read accepted", AsyncScenarios::describe);
            String w = ScenarioRunner.attempt(() -> c.write(ByteBuffer.allocate(1)) == null ? "null" : null,
                "write accepted", AsyncScenarios::describe);
            String s = ScenarioRunner.attempt(() -> c.shutdownOutput() == null ? "null" : null, "shut down",
                AsyncScenarios::describe);
            return r + "; " + w + "; " + s + "; remote " + c.getRemoteAddress() + "; local " + c.getLocalAddress();
        }
    }

    static String connectRefused() throws Exception {
        InetSocketAddress gone;
        try (AsynchronousServerSocketChannel ss = server()) {
            gone = (InetSocketAddress) ss.getLocalAddress();
        }
        AsynchronousSocketChannel c = AsynchronousSocketChannel.open();
        Outcome<Void> o = new Outcome<>();
        c.connect(gone, null, o);
        String r = o.await();
        return r + "; open " + c.isOpen();
    }

    /**
     * A refused connect in a fixed-pool group, the channel then closed: the group's shutdown terminates it (a
     * channel the refusal closed is no longer counted, or the group, and a JVM waiting for it, would wait for good),
     * and a cancelled future's get throws as the JDK's.
     */
    static String connectRefusedInAFixedGroup() throws Exception {
        InetSocketAddress gone;
        try (AsynchronousServerSocketChannel ss = server()) {
            gone = (InetSocketAddress) ss.getLocalAddress();
        }
        AsynchronousChannelGroup group = AsynchronousChannelGroup.withFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "scenario-fixed-group");
            t.setDaemon(true);
            return t;
        });
        AsynchronousSocketChannel c = AsynchronousSocketChannel.open(group);
        String r;
        try {
            c.connect(gone).get(GUARD_SECONDS, TimeUnit.SECONDS);
            r = "connected";
        } catch (java.util.concurrent.ExecutionException e) {
            r = describe(e.getCause());
        }
        c.close();
        group.shutdown();
        boolean terminated = group.awaitTermination(GUARD_SECONDS, TimeUnit.SECONDS);
        String cancelled;
        try (AsynchronousServerSocketChannel ss = server(); Pair p = Pair.open(ss)) {
            Future<Integer> f = p.client().read(ByteBuffer.allocate(4));
            f.cancel(true);
            try {
                f.get();
                cancelled = "read";
            } catch (java.util.concurrent.CancellationException e) {
                cancelled = describe(e) + ": " + e.getMessage();
            }
        }
        return r + "; open " + c.isOpen() + "; terminated " + terminated + "; a cancelled read's get " + cancelled;
    }

    static String cancelRead() throws Exception {
        try (AsynchronousServerSocketChannel ss = server(); Pair p = Pair.open(ss)) {
            ByteBuffer buffer = ByteBuffer.allocate(4);
            Future<Integer> f = p.client().read(buffer);
            boolean cancelled = f.cancel(false);
            String next;
            try {
                p.client().read(ByteBuffer.allocate(4));
                next = "read allowed";
            } catch (RuntimeException e) {
                next = describe(e);
            }
            String get;
            try {
                get = "got " + f.get(GUARD_SECONDS, TimeUnit.SECONDS);
            } catch (java.util.concurrent.CancellationException e) {
                get = describe(e);
            }
            // As the JDK's, the cancelled read stays under way: bytes that come go into its buffer, unseen.
            writeAll(p.accepted(), ByteBuffer.wrap(new byte[] {1, 2, 3}));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(GUARD_SECONDS);
            while (buffer.position() < 3 && System.nanoTime() - deadline < 0) {
                Thread.sleep(5);
            }
            return "cancel " + cancelled + ", isCancelled " + f.isCancelled() + ", get " + get + "; next " + next
                    + "; open " + p.client().isOpen() + "; bytes after the cancel in its buffer " + buffer.position();
        }
    }

    static String acceptPending() throws Exception {
        try (AsynchronousServerSocketChannel ss = server()) {
            Future<AsynchronousSocketChannel> first = ss.accept();
            String second;
            try {
                ss.accept();
                second = "second accept taken";
            } catch (RuntimeException e) {
                second = describe(e);
            }
            try (AsynchronousSocketChannel c = AsynchronousSocketChannel.open()) {
                c.connect(ss.getLocalAddress()).get(GUARD_SECONDS, TimeUnit.SECONDS);
                try (AsynchronousSocketChannel a = first.get(GUARD_SECONDS, TimeUnit.SECONDS)) {
                    return second + "; first accepts, remote is the client "
                            + a.getRemoteAddress().equals(c.getLocalAddress());
                }
            }
        }
    }

    static String closeWhileAccepting() throws Exception {
        AsynchronousServerSocketChannel ss = server();
        Outcome<AsynchronousSocketChannel> o = new Outcome<>();
        ss.accept(null, o);
        Thread.sleep(200);
        ss.close();
        Outcome<AsynchronousSocketChannel> after = new Outcome<>();
        ss.accept(null, after);
        return o.await() + "; accept after close " + after.await() + "; open " + ss.isOpen();
    }

    /** A fixed group of two threads: handlers run on its threads; shutdown, then termination once closed. */
    static String fixedGroup() throws Exception {
        AsynchronousChannelGroup group = AsynchronousChannelGroup.withFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "scenario-group");
            t.setDaemon(true);
            return t;
        });
        AsynchronousServerSocketChannel ss = AsynchronousServerSocketChannel.open(group)
            .bind(new InetSocketAddress(LOOPBACK, 0));
        CompletableFuture<String> acceptThread = new CompletableFuture<>();
        ss.accept(null, new CompletionHandler<AsynchronousSocketChannel, Object>() {
            @Override
            public void completed(AsynchronousSocketChannel ch, Object a) {
                acceptThread.complete(Thread.currentThread().getName());
                try {
                    ch.close();
                } catch (IOException e) {
                    acceptThread.complete(describe(e));
                }
            }

            @Override
            public void failed(Throwable exc, Object a) {
                acceptThread.complete(describe(exc));
            }
        });
        AsynchronousSocketChannel c = AsynchronousSocketChannel.open(group);
        c.connect(ss.getLocalAddress()).get(GUARD_SECONDS, TimeUnit.SECONDS);
        String thread = acceptThread.get(GUARD_SECONDS, TimeUnit.SECONDS);
        group.shutdown();
        boolean terminatedWhileOpen = group.awaitTermination(200, TimeUnit.MILLISECONDS);
        String refused;
        try {
            AsynchronousSocketChannel.open(group);
            refused = "opened";
        } catch (java.nio.channels.ShutdownChannelGroupException e) {
            refused = describe(e);
        }
        c.close();
        ss.close();
        boolean terminated = group.awaitTermination(GUARD_SECONDS, TimeUnit.SECONDS);
        return "handler thread " + thread + "; shutdown " + group.isShutdown() + ", terminated while open "
                + terminatedWhileOpen + ", open after shutdown " + refused + ", terminated after close " + terminated;
    }

    /**
     * A cached-pool group holding only the client, shut down now while the client's read waits: the read fails as
     * closed, the client closes, the group ends, and the server's end (in the default group) reads the end of the
     * stream. (With both ends in the group the outcome would race on the JDK too: closing the server's end first
     * hands the client's read a FIN.)
     */
    static String groupShutdownNow() throws Exception {
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "scenario-cached-group");
            t.setDaemon(true);
            return t;
        });
        AsynchronousChannelGroup group = AsynchronousChannelGroup.withCachedThreadPool(pool, 1);
        try (AsynchronousServerSocketChannel ss = server()) {
            Future<AsynchronousSocketChannel> af = ss.accept();
            AsynchronousSocketChannel c = AsynchronousSocketChannel.open(group);
            c.connect(ss.getLocalAddress()).get(GUARD_SECONDS, TimeUnit.SECONDS);
            try (AsynchronousSocketChannel a = af.get(GUARD_SECONDS, TimeUnit.SECONDS)) {
                Outcome<Integer> read = new Outcome<>();
                c.read(ByteBuffer.allocate(8), null, read);
                Thread.sleep(200);
                group.shutdownNow();
                String r = read.await();
                boolean terminated = group.awaitTermination(GUARD_SECONDS, TimeUnit.SECONDS);
                int peer = a.read(ByteBuffer.allocate(8)).get(GUARD_SECONDS, TimeUnit.SECONDS);
                return "pending read " + r + "; client open " + c.isOpen() + "; terminated " + terminated
                        + "; the server's end reads " + peer;
            }
        }
    }

    static String addressesAndOptions() throws Exception {
        try (AsynchronousServerSocketChannel ss = server(); AsynchronousSocketChannel c = AsynchronousSocketChannel.open()) {
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            c.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
            Future<AsynchronousSocketChannel> af = ss.accept();
            c.connect(ss.getLocalAddress()).get(GUARD_SECONDS, TimeUnit.SECONDS);
            try (AsynchronousSocketChannel a = af.get(GUARD_SECONDS, TimeUnit.SECONDS)) {
                String unsupported;
                try {
                    c.setOption(StandardSocketOptions.IP_MULTICAST_TTL, 1);
                    unsupported = "set";
                } catch (UnsupportedOperationException e) {
                    unsupported = describe(e);
                }
                return "remote is server " + c.getRemoteAddress().equals(ss.getLocalAddress()) + ", local is accepted's remote "
                        + c.getLocalAddress().equals(a.getRemoteAddress()) + ", nodelay "
                        + c.getOption(StandardSocketOptions.TCP_NODELAY) + ", keepalive "
                        + c.getOption(StandardSocketOptions.SO_KEEPALIVE) + ", multicast ttl " + unsupported
                        + ", supports SO_RCVBUF " + c.supportedOptions().contains(StandardSocketOptions.SO_RCVBUF)
                        + ", server supports SO_REUSEADDR "
                        + ss.supportedOptions().contains(StandardSocketOptions.SO_REUSEADDR);
            }
        }
    }

    static String scatterGather() throws Exception {
        try (AsynchronousServerSocketChannel ss = server(); Pair p = Pair.open(ss)) {
            ByteBuffer[] out = {ByteBuffer.wrap("ab".getBytes(StandardCharsets.US_ASCII)),
                ByteBuffer.wrap("cdef".getBytes(StandardCharsets.US_ASCII))};
            long written = 0;
            while (out[1].hasRemaining()) {
                Outcome<Long> w = new Outcome<>();
                p.client().write(out, 0, 2, 0, TimeUnit.SECONDS, null, w);
                written += w.get(GUARD_SECONDS, TimeUnit.SECONDS);
            }
            ByteBuffer[] in = {ByteBuffer.allocate(3), ByteBuffer.allocate(3)};
            long read = 0;
            while (read < 6) {
                Outcome<Long> r = new Outcome<>();
                p.accepted().read(in, 0, 2, GUARD_SECONDS, TimeUnit.SECONDS, null, r);
                read += r.get(GUARD_SECONDS, TimeUnit.SECONDS);
            }
            return "wrote " + written + ", read " + new String(in[0].array(), StandardCharsets.US_ASCII) + "|"
                    + new String(in[1].array(), StandardCharsets.US_ASCII);
        }
    }

    static String zeroLength() throws Exception {
        try (AsynchronousServerSocketChannel ss = server(); Pair p = Pair.open(ss)) {
            int r = p.client().read(ByteBuffer.allocate(0)).get(GUARD_SECONDS, TimeUnit.SECONDS);
            int w = p.client().write(ByteBuffer.allocate(0)).get(GUARD_SECONDS, TimeUnit.SECONDS);
            String ro;
            try {
                p.client().read(ByteBuffer.allocate(4).asReadOnlyBuffer());
                ro = "read-only accepted";
            } catch (IllegalArgumentException e) {
                ro = describe(e);
            }
            Outcome<Long> gather = new Outcome<>();
            p.client().write(new ByteBuffer[] {ByteBuffer.allocate(0), ByteBuffer.allocate(0)}, 0, 2, 0,
                TimeUnit.SECONDS, null, gather);
            Outcome<Long> scatter = new Outcome<>();
            p.client().read(new ByteBuffer[] {ByteBuffer.allocate(0)}, 0, 1, 0, TimeUnit.SECONDS, null, scatter);
            return "read " + r + ", write " + w + ", read-only " + ro + ", empty gathering write " + gather.await()
                    + ", full scattering read " + scatter.await();
        }
    }

    static String nioClientToAsyncServer() throws Exception {
        try (AsynchronousServerSocketChannel ss = server()) {
            Future<AsynchronousSocketChannel> af = ss.accept();
            try (SocketChannel c = SocketChannel.open(ss.getLocalAddress());
                 AsynchronousSocketChannel a = af.get(GUARD_SECONDS, TimeUnit.SECONDS)) {
                c.write(ByteBuffer.wrap("from nio".getBytes(StandardCharsets.US_ASCII)));
                ByteBuffer got = ByteBuffer.allocate(8);
                while (got.hasRemaining()) {
                    a.read(got).get(GUARD_SECONDS, TimeUnit.SECONDS);
                }
                writeAll(a, ByteBuffer.wrap("from aio".getBytes(StandardCharsets.US_ASCII)));
                ByteBuffer back = ByteBuffer.allocate(8);
                while (back.hasRemaining() && c.read(back) >= 0) {
                    // blocking
                }
                return new String(got.array(), StandardCharsets.US_ASCII) + " / "
                        + new String(back.array(), StandardCharsets.US_ASCII);
            }
        }
    }

    static String asyncClientToNioServer() throws Exception {
        try (ServerSocketChannel ss = ServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0));
             AsynchronousSocketChannel c = AsynchronousSocketChannel.open()) {
            c.connect(ss.getLocalAddress()).get(GUARD_SECONDS, TimeUnit.SECONDS);
            try (SocketChannel a = ss.accept()) {
                writeAll(c, ByteBuffer.wrap("from aio".getBytes(StandardCharsets.US_ASCII)));
                ByteBuffer got = ByteBuffer.allocate(8);
                while (got.hasRemaining() && a.read(got) >= 0) {
                    // blocking
                }
                a.write(ByteBuffer.wrap("from nio".getBytes(StandardCharsets.US_ASCII)));
                ByteBuffer back = ByteBuffer.allocate(8);
                while (back.hasRemaining()) {
                    c.read(back).get(GUARD_SECONDS, TimeUnit.SECONDS);
                }
                return new String(got.array(), StandardCharsets.US_ASCII) + " / "
                        + new String(back.array(), StandardCharsets.US_ASCII);
            }
        }
    }

    /** A client bound before it connects: it connects from the bound port, which stays taken while it lives. */
    static String boundBeforeConnect() throws Exception {
        try (AsynchronousServerSocketChannel ss = server();
             AsynchronousSocketChannel c = AsynchronousSocketChannel.open()) {
            c.bind(new InetSocketAddress(LOOPBACK, 0));
            InetSocketAddress bound = (InetSocketAddress) c.getLocalAddress();
            Future<AsynchronousSocketChannel> af = ss.accept();
            c.connect(ss.getLocalAddress()).get(GUARD_SECONDS, TimeUnit.SECONDS);
            try (AsynchronousSocketChannel a = af.get(GUARD_SECONDS, TimeUnit.SECONDS)) {
                writeAll(c, ByteBuffer.wrap(new byte[] {7}));
                ByteBuffer got = ByteBuffer.allocate(1);
                a.read(got).get(GUARD_SECONDS, TimeUnit.SECONDS);
                String held;
                try (SocketChannel other = SocketChannel.open()) {
                    other.bind(bound);
                    held = "port free";
                } catch (IOException e) {
                    held = e.getClass().getName();
                }
                return "read " + got.get(0) + ", peer sees the bound address " + a.getRemoteAddress().equals(bound)
                    + ", local kept " + c.getLocalAddress().equals(bound) + ", another bind " + held;
            }
        }
    }

    /** The options an asynchronous channel has (no SO_LINGER, IP_TOS), and a second bind of a server. */
    static String optionsAndSecondBind() throws Exception {
        try (AsynchronousServerSocketChannel ss = server(); Pair p = Pair.open(ss)) {
            String second = ScenarioRunner.attempt(() -> {
                ss.bind(new InetSocketAddress(LOOPBACK, 0));
                return "bound twice";
            }, "", AsyncScenarios::describe);
            String linger = ScenarioRunner.attempt(() -> {
                p.client().setOption(StandardSocketOptions.SO_LINGER, 0);
                return "set";
            }, "", AsyncScenarios::describe);
            String tos = ScenarioRunner.attempt(() -> String.valueOf(p.accepted().getOption(StandardSocketOptions.IP_TOS)),
                "", AsyncScenarios::describe);
            return "second bind " + second + "; SO_LINGER " + linger + "; IP_TOS " + tos + "; client options "
                + names(p.client().supportedOptions()) + "; accepted options " + names(p.accepted().supportedOptions())
                + "; server options " + names(ss.supportedOptions());
        }
    }

    private static String names(java.util.Set<java.net.SocketOption<?>> options) {
        return new java.util.TreeSet<>(options.stream().map(java.net.SocketOption::name).toList()).toString();
    }

    /**
     * A reset read (the peer closes with SO_LINGER 0), a write waiting for room when the output is shut down, a
     * read waiting when the input is, and a shutdown of a closed channel.
     */
    static String resetAndShutdowns() throws Exception {
        StringBuilder out = new StringBuilder();
        try (AsynchronousServerSocketChannel ss = server()) {
            Future<AsynchronousSocketChannel> af = ss.accept();
            try (Socket peer = new Socket()) {
                peer.connect(ss.getLocalAddress(), (int) TimeUnit.SECONDS.toMillis(GUARD_SECONDS));
                try (AsynchronousSocketChannel a = af.get(GUARD_SECONDS, TimeUnit.SECONDS)) {
                    Future<Integer> r = a.read(ByteBuffer.allocate(8));
                    peer.setSoLinger(true, 0);
                    peer.close();
                    out.append("reset read: ").append(ScenarioRunner.attempt(
                        () -> String.valueOf(r.get(GUARD_SECONDS, TimeUnit.SECONDS)), "", AsyncScenarios::failure));
                    // The kernel reports a reset once: later reads of the JDK's asynchronous channel end.
                    for (int i = 0; i < 2; i++) {
                        out.append(", then ").append(ScenarioRunner.attempt(() -> String.valueOf(
                            a.read(ByteBuffer.allocate(8)).get(GUARD_SECONDS, TimeUnit.SECONDS)), "",
                            AsyncScenarios::failure));
                    }
                }
            }
            try (Pair p = Pair.open(ss)) {
                ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20);
                Future<Integer> w = null;
                for (int i = 0; i < 400; i++) {
                    chunk.clear();
                    w = p.client().write(chunk);
                    try {
                        w.get(100, TimeUnit.MILLISECONDS);
                    } catch (java.util.concurrent.TimeoutException waiting) {
                        break;
                    }
                }
                p.client().shutdownOutput();
                Future<Integer> pending = w;
                out.append("; write waiting at shutdownOutput: ").append(ScenarioRunner.attempt(
                    () -> String.valueOf(pending.get(GUARD_SECONDS, TimeUnit.SECONDS)), "", AsyncScenarios::failure));
                Future<Integer> r = p.client().read(ByteBuffer.allocate(8));
                p.client().shutdownInput();
                out.append("; read waiting at shutdownInput: ").append(ScenarioRunner.attempt(
                    () -> String.valueOf(r.get(GUARD_SECONDS, TimeUnit.SECONDS)), "", AsyncScenarios::failure));
                p.client().close();
                out.append("; shutdownInput after close: ").append(ScenarioRunner.attempt(() -> {
                    p.client().shutdownInput();
                    return "done";
                }, "", AsyncScenarios::describe));
            }
        }
        return out.toString();
    }

    /**
     * Bad arguments, each with the JDK's exception and message: a null handler, a null buffer, a scattering range
     * out of bounds, a connected channel asked to connect to an address of another kind, options with a null name,
     * a null value and after shutdownOutput; a read whose timeout has no unit fails that read, and the channel
     * reads on.
     */
    static String argumentErrors() throws Exception {
        StringBuilder out = new StringBuilder();
        try (AsynchronousServerSocketChannel ss = server(); Pair p = Pair.open(ss)) {
            AsynchronousSocketChannel c = p.client();
            out.append("null handler: ").append(ScenarioRunner.attempt(() -> {
                c.read(ByteBuffer.allocate(1), 1, TimeUnit.SECONDS, null, null);
                return "taken";
            }, "", AsyncScenarios::failure));
            out.append("; read null: ").append(ScenarioRunner.attempt(() -> c.read(null), "", AsyncScenarios::failure));
            out.append("; write null: ").append(ScenarioRunner.attempt(() -> c.write(null), "", AsyncScenarios::failure));
            out.append("; scatter from -1: ").append(ScenarioRunner.attempt(() -> {
                c.read(new ByteBuffer[] {ByteBuffer.allocate(1)}, -1, 1, 1, TimeUnit.SECONDS, null, new Outcome<Long>());
                return "taken";
            }, "", AsyncScenarios::failure));
            out.append("; connect again elsewhere: ").append(ScenarioRunner.attempt(() -> c.connect(new SocketAddress() {
                private static final long serialVersionUID = 1L;
            }), "", AsyncScenarios::failure));
            out.append("; option null name: ").append(ScenarioRunner.attempt(() -> c.setOption(null, 1), "",
                AsyncScenarios::failure));
            out.append("; option null value: ").append(ScenarioRunner.attempt(
                () -> c.setOption(StandardSocketOptions.SO_RCVBUF, null), "", AsyncScenarios::failure));
            Outcome<Integer> noUnit = new Outcome<>();
            out.append("; read without a unit: ").append(ScenarioRunner.attempt(() -> {
                c.read(ByteBuffer.allocate(8), 5, null, null, noUnit);
                return "started";
            }, "", AsyncScenarios::failure));
            out.append(", its handler ").append(noUnit.await());
            writeAll(p.accepted(), ByteBuffer.wrap("abc".getBytes(StandardCharsets.US_ASCII)));
            ByteBuffer got = ByteBuffer.allocate(8);
            out.append(", next read ").append(ScenarioRunner.attempt(
                () -> c.read(got).get(GUARD_SECONDS, TimeUnit.SECONDS), "", AsyncScenarios::failure));
            c.shutdownOutput();
            out.append("; option after shutdownOutput: ").append(ScenarioRunner.attempt(
                () -> c.setOption(StandardSocketOptions.SO_RCVBUF, 65536), "", AsyncScenarios::failure));
            out.append("; accept null handler: ").append(ScenarioRunner.attempt(() -> {
                ss.accept(null, null);
                return "taken";
            }, "", AsyncScenarios::failure));
        }
        return out.toString();
    }

    /**
     * The peer resets (SO_LINGER 0) while a read and a write both wait (the peer reads nothing): the JDK's channel
     * finishes the write first, so the write reports the reset and the read sees end of stream.
     */
    static String resetWithReadAndWriteWaiting() throws Exception {
        try (AsynchronousServerSocketChannel ss = server()) {
            Future<AsynchronousSocketChannel> af = ss.accept();
            try (Socket peer = new Socket()) {
                // A window the peer sized itself: nothing frees it while it does not read (no spill), so the write
                // found waiting stays waiting until the reset.
                peer.setReceiveBufferSize(64 << 10);
                peer.connect(ss.getLocalAddress(), (int) TimeUnit.SECONDS.toMillis(GUARD_SECONDS));
                try (AsynchronousSocketChannel a = af.get(GUARD_SECONDS, TimeUnit.SECONDS)) {
                    ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20);
                    Future<Integer> w = null;
                    for (int i = 0; i < 400 && w == null; i++) {
                        chunk.clear();
                        Future<Integer> f = a.write(chunk);
                        try {
                            f.get(1000, TimeUnit.MILLISECONDS);
                        } catch (java.util.concurrent.TimeoutException waiting) {
                            w = f;
                        }
                    }
                    Future<Integer> r = a.read(ByteBuffer.allocate(8));
                    peer.setSoLinger(true, 0);
                    peer.close();
                    Future<Integer> pending = w;
                    return "a write waits " + (w != null) + "; the write: " + ScenarioRunner.attempt(
                        () -> String.valueOf(pending.get(GUARD_SECONDS, TimeUnit.SECONDS) > 0), "", AsyncScenarios::failure)
                        + "; the read: " + ScenarioRunner.attempt(() -> String.valueOf(r.get(GUARD_SECONDS,
                            TimeUnit.SECONDS)), "", AsyncScenarios::failure)
                        + "; next read: " + ScenarioRunner.attempt(() -> String.valueOf(a.read(ByteBuffer.allocate(8))
                            .get(GUARD_SECONDS, TimeUnit.SECONDS)), "", AsyncScenarios::failure)
                        + "; next write: " + ScenarioRunner.attempt(() -> String.valueOf(a.write(ByteBuffer.allocate(8))
                            .get(GUARD_SECONDS, TimeUnit.SECONDS)), "", AsyncScenarios::failure);
                }
            }
        }
    }

    /** A waiting accept cancelled through its future (without closing): the JDK refuses later accepts. */
    static String acceptAfterCancel() throws Exception {
        try (AsynchronousServerSocketChannel ss = server()) {
            Future<AsynchronousSocketChannel> f = ss.accept();
            boolean cancelled = f.cancel(false);
            String next = ScenarioRunner.attempt(() -> {
                ss.accept();
                return "accept allowed";
            }, "", AsyncScenarios::failure);
            return "cancel " + cancelled + ", isCancelled " + f.isCancelled() + "; next " + next + "; open " + ss.isOpen();
        }
    }

    /** An exception as a program prints it: class and message (an ExecutionException's cause). */
    private static String failure(Throwable t) {
        Throwable c = t instanceof ExecutionException && t.getCause() != null ? t.getCause() : t;
        return c.getClass().getName() + ": " + c.getMessage();
    }

    static String socketToAsyncServer() throws Exception {
        try (AsynchronousServerSocketChannel ss = server()) {
            Future<AsynchronousSocketChannel> af = ss.accept();
            try (Socket s = new Socket()) {
                s.connect(ss.getLocalAddress(), (int) TimeUnit.SECONDS.toMillis(GUARD_SECONDS));
                s.setSoTimeout((int) TimeUnit.SECONDS.toMillis(GUARD_SECONDS));
                try (AsynchronousSocketChannel a = af.get(GUARD_SECONDS, TimeUnit.SECONDS)) {
                    s.getOutputStream().write("from net".getBytes(StandardCharsets.US_ASCII));
                    ByteBuffer got = ByteBuffer.allocate(8);
                    while (got.hasRemaining()) {
                        a.read(got).get(GUARD_SECONDS, TimeUnit.SECONDS);
                    }
                    writeAll(a, ByteBuffer.wrap("from aio".getBytes(StandardCharsets.US_ASCII)));
                    byte[] back = s.getInputStream().readNBytes(8);
                    return new String(got.array(), StandardCharsets.US_ASCII) + " / "
                            + new String(back, StandardCharsets.US_ASCII);
                }
            }
        }
    }
}
