package io.rdmanio.examples.agent;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32;

/**
 * java.net scenarios, written once: each prints one line of what a program sees (values, exception classes and
 * messages, never times or port numbers). {@link JavaNetConformanceTest} runs this program on the JDK alone and
 * through the agent with rules that route 127.0.0.1, and requires the same lines. Every blocking call has a
 * bound (SO_TIMEOUT or a join with a limit), so a scenario that hangs reports instead of stalling the run.
 *
 * <p>Arguments: scenario names to run (none: all).
 */
public final class JavaNetScenarios {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    private static final int GUARD_MILLIS = 20_000;


    public static void main(String[] args) throws Exception {
        Map<String, ScenarioRunner.Scenario> all = new LinkedHashMap<>();
        all.put("echo", JavaNetScenarios::echo);
        all.put("readTimeoutThenData", JavaNetScenarios::readTimeoutThenData);
        all.put("halfClose", JavaNetScenarios::halfClose);
        all.put("closeWhileReading", JavaNetScenarios::closeWhileReading);
        all.put("interruptWhileReading", JavaNetScenarios::interruptWhileReading);
        all.put("interruptVirtualReader", JavaNetScenarios::interruptVirtualReader);
        all.put("interruptVirtualAcceptor", JavaNetScenarios::interruptVirtualAcceptor);
        all.put("closeWhileWriting", JavaNetScenarios::closeWhileWriting);
        all.put("interruptWhileWriting", JavaNetScenarios::interruptWhileWriting);
        all.put("interruptWhileAccepting", JavaNetScenarios::interruptWhileAccepting);
        all.put("acceptTimeout", JavaNetScenarios::acceptTimeout);
        all.put("closeWhileAccepting", JavaNetScenarios::closeWhileAccepting);
        all.put("connectRefused", JavaNetScenarios::connectRefused);
        all.put("backlog", JavaNetScenarios::backlog);
        all.put("options", JavaNetScenarios::options);
        all.put("serverOptions", JavaNetScenarios::serverOptions);
        all.put("addresses", JavaNetScenarios::addresses);
        all.put("available", JavaNetScenarios::available);
        all.put("largeRead", JavaNetScenarios::largeRead);
        all.put("peerCloses", JavaNetScenarios::peerCloses);
        all.put("lingerZeroResets", JavaNetScenarios::lingerZeroResets);
        all.put("closeWithUnreadBytes", JavaNetScenarios::closeWithUnreadBytes);
        all.put("afterClose", JavaNetScenarios::afterClose);
        all.put("streamsAfterShutdown", JavaNetScenarios::streamsAfterShutdown);
        all.put("addressesAfterClose", JavaNetScenarios::addressesAfterClose);
        all.put("readAfterClose", JavaNetScenarios::readAfterClose);
        all.put("optionValues", JavaNetScenarios::optionValues);
        all.put("bindInUse", JavaNetScenarios::bindInUse);
        all.put("boundBeforeConnect", JavaNetScenarios::boundBeforeConnect);
        all.put("optionSets", JavaNetScenarios::optionSets);
        all.put("acceptedInheritsListenerOptions", JavaNetScenarios::acceptedInheritsListenerOptions);
        all.put("boundConnectRefused", JavaNetScenarios::boundConnectRefused);
        all.put("connectAgainAfterRefused", JavaNetScenarios::connectAgainAfterRefused);
        all.put("urgentData", JavaNetScenarios::urgentData);
        all.put("nioClientToServerSocket", JavaNetScenarios::nioClientToServerSocket);
        all.put("socketToNioServer", JavaNetScenarios::socketToNioServer);
        all.put("httpUrlConnection", JavaNetScenarios::httpUrlConnection);
        all.put("httpUrlConnectionToJetty", JavaNetScenarios::httpUrlConnectionToJetty);
        all.put("tls", JavaNetScenarios::tls);
        ScenarioRunner.run(all, args, JavaNetScenarios::describe);
    }

    static String describe(Throwable t) {
        return t.getClass().getName() + ": " + t.getMessage();
    }

    private static ServerSocket server() throws IOException {
        ServerSocket ss = new ServerSocket();
        ss.bind(new InetSocketAddress(LOOPBACK, 0));
        ss.setSoTimeout(GUARD_MILLIS);
        return ss;
    }

    private static Socket connect(ServerSocket ss) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress(LOOPBACK, ss.getLocalPort()), GUARD_MILLIS);
        s.setSoTimeout(GUARD_MILLIS);
        return s;
    }

    private static Socket accept(ServerSocket ss) throws IOException {
        Socket s = ss.accept();
        s.setSoTimeout(GUARD_MILLIS);
        return s;
    }

    private static byte[] readExactly(InputStream in, int n) throws IOException {
        byte[] b = in.readNBytes(n);
        if (b.length != n) {
            throw new IOException("end of stream after " + b.length + " of " + n + " bytes");
        }
        return b;
    }

    private static long crc(byte[] b) {
        CRC32 c = new CRC32();
        c.update(b);
        return c.getValue();
    }

    /**
     * A socket closed with bytes unread: the JDK's shuts its output first, so its peer reads end of stream, and the
     * reset that the unread bytes cause fails the peer's writes as a reset after a FIN does ("Broken pipe"), its
     * reads still ending, where a bare reset would read "Connection reset".
     */
    static String closeWithUnreadBytes() throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket s = accept(ss)) {
            c.getOutputStream().write(new byte[1000]);
            readExactly(s.getInputStream(), 1);
            s.close();
            InputStream in = c.getInputStream();
            StringBuilder sb = new StringBuilder("reads");
            for (int i = 0; i < 3; i++) {
                sb.append(' ').append(in.read());
            }
            String write = "no failure";
            long deadline = System.nanoTime() + GUARD_MILLIS * 1_000_000L;
            try {
                while (System.nanoTime() - deadline < 0) {
                    c.getOutputStream().write(new byte[10]);
                    Thread.sleep(1);
                }
            } catch (IOException e) {
                // The JDK's carries no cause (a program walking the chain finds nothing more).
                write = describe(e) + ", cause " + e.getCause();
            }
            return sb + "; a write then: " + write + "; a read then: " + in.read();
        }
    }

    /** 1 MiB each way through a server thread that echoes, byte-exact. */
    static String echo() throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss)) {
            Thread t = new Thread(() -> {
                try (Socket a = accept(ss)) {
                    a.getInputStream().transferTo(a.getOutputStream());
                } catch (IOException e) {
                    System.out.println("echo server: " + describe(e));
                }
            });
            t.start();
            byte[] data = new byte[1 << 20];
            new java.util.Random(7).nextBytes(data);
            Thread w = new Thread(() -> {
                try {
                    OutputStream out = c.getOutputStream();
                    for (int off = 0; off < data.length; off += 10_000) {
                        out.write(data, off, Math.min(10_000, data.length - off));
                    }
                    c.shutdownOutput();
                } catch (IOException e) {
                    System.out.println("echo writer: " + describe(e));
                }
            });
            w.start();
            byte[] back = c.getInputStream().readAllBytes();
            w.join(GUARD_MILLIS);
            t.join(GUARD_MILLIS);
            return back.length + " bytes, same: " + (crc(back) == crc(data));
        }
    }

    static String readTimeoutThenData() throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
            c.setSoTimeout(200);
            String first;
            try {
                first = "read " + c.getInputStream().read();
            } catch (IOException e) {
                first = describe(e);
            }
            a.getOutputStream().write(42);
            c.setSoTimeout(GUARD_MILLIS);
            return first + "; then " + c.getInputStream().read() + ", closed " + c.isClosed();
        }
    }

    static String halfClose() throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
            c.getOutputStream().write("hi".getBytes(StandardCharsets.US_ASCII));
            c.shutdownOutput();
            byte[] got = a.getInputStream().readAllBytes();
            a.getOutputStream().write("bye".getBytes(StandardCharsets.US_ASCII));
            a.close();
            byte[] back = c.getInputStream().readAllBytes();
            return new String(got, StandardCharsets.US_ASCII) + " then eof; " + new String(back, StandardCharsets.US_ASCII)
                    + " then eof; outputShutdown " + c.isOutputShutdown() + ", inputShutdown " + c.isInputShutdown();
        }
    }

    /**
     * A reader blocked on a socket the peer sends nothing to, started by {@code start}: what it saw (the byte, or
     * the exception) and whether its interrupt status was set afterwards.
     */
    private static final class BlockedReader {
        final AtomicReference<String> seen = new AtomicReference<>("nothing");
        final Thread thread;

        BlockedReader(Socket c, java.util.function.Function<Runnable, Thread> start) throws InterruptedException {
            CountDownLatch reading = new CountDownLatch(1);
            thread = start.apply(() -> {
                String r;
                try {
                    InputStream in = c.getInputStream();
                    reading.countDown();
                    r = "read " + in.read();
                } catch (IOException e) {
                    r = describe(e);
                }
                seen.set(r + ", interrupted " + Thread.currentThread().isInterrupted());
            });
            reading.await();
            // Past the latch the reader is in (or about to enter) its read; the act below comes once it waits.
            Thread.sleep(300);
        }

        String outcome() throws InterruptedException {
            thread.join(GUARD_MILLIS);
            return seen.get();
        }
    }

    private static Thread platform(Runnable body) {
        Thread t = new Thread(body);
        t.start();
        return t;
    }

    /** A read blocked in one thread, the socket closed by another. */
    static String closeWhileReading() throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
            BlockedReader r = new BlockedReader(c, JavaNetScenarios::platform);
            c.close();
            return r.outcome() + "; peer reads " + a.getInputStream().read();
        }
    }

    /**
     * A platform thread blocked in a read is interrupted: java.net's socket is not an interruptible channel, the
     * read goes on and returns the byte that comes later, the interrupt status kept.
     */
    static String interruptWhileReading() throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
            BlockedReader r = new BlockedReader(c, JavaNetScenarios::platform);
            r.thread.interrupt();
            Thread.sleep(300);
            try {
                a.getOutputStream().write(7);
            } catch (IOException e) {
                return "writer: " + describe(e) + "; reader " + r.seen.get();
            }
            return r.outcome() + "; closed " + c.isClosed();
        }
    }

    /**
     * A writer blocked on a peer that does not read (the kernel's buffers, or the fabric's window, full) while
     * another thread acts on it; returns what the writer saw once the peer drained everything.
     */
    private static String blockedWriter(java.util.function.BiConsumer<Socket, Thread> act) throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
            AtomicReference<String> seen = new AtomicReference<>("nothing");
            Thread w = new Thread(() -> {
                byte[] chunk = new byte[64 * 1024];
                try {
                    OutputStream out = c.getOutputStream();
                    for (int i = 0; i < 1024; i++) {
                        out.write(chunk);
                    }
                    seen.set("wrote all, interrupted " + Thread.currentThread().isInterrupted());
                } catch (IOException e) {
                    seen.set(describe(e) + ", interrupted " + Thread.currentThread().isInterrupted());
                }
            });
            w.start();
            Thread.sleep(500);
            act.accept(c, w);
            Thread.sleep(300);
            // Drain what the peer was sent, so that a writer still going can finish.
            a.setSoTimeout(2000);
            long drained = 0;
            try {
                InputStream in = a.getInputStream();
                byte[] b = new byte[64 * 1024];
                int n;
                while (drained < 64L * 1024 * 1024 && (n = in.read(b)) > 0) {
                    drained += n;
                }
            } catch (IOException e) {
                // the end of what comes: timeout or reset
            }
            w.join(GUARD_MILLIS);
            return seen.get() + "; closed " + c.isClosed() + "; peer drained all " + (drained == 64L * 1024 * 1024);
        }
    }

    /** A writer blocked on a full window, the socket closed by another thread: "Socket closed". */
    static String closeWhileWriting() throws Exception {
        return blockedWriter((c, w) -> {
            try {
                c.close();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    /** A platform thread blocked writing is interrupted: the write goes on, as a read does. */
    static String interruptWhileWriting() throws Exception {
        return blockedWriter((c, w) -> w.interrupt());
    }

    /** Starts a virtual thread running its argument (JDK 21 and later, found reflectively); null on an older JDK. */
    private static java.util.function.Function<Runnable, Thread> virtualStarter() throws ReflectiveOperationException {
        java.lang.reflect.Method ofVirtual;
        try {
            ofVirtual = Thread.class.getMethod("ofVirtual");
        } catch (NoSuchMethodException e) {
            return null;
        }
        Object builder = ofVirtual.invoke(null);
        java.lang.reflect.Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
        return body -> {
            try {
                return (Thread) start.invoke(builder, body);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        };
    }

    /**
     * A virtual thread (JDK 21 and later) blocked in a read is interrupted: there java.net closes the socket and
     * the read throws "Closed by interrupt".
     */
    static String interruptVirtualReader() throws Exception {
        if (virtualStarter() == null) {
            return "no virtual threads on this JDK";
        }
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
            BlockedReader r = new BlockedReader(c, virtualStarter());
            r.thread.interrupt();
            return r.outcome() + "; closed " + c.isClosed() + "; peer reads " + a.getInputStream().read();
        }
    }

    /**
     * A virtual thread (JDK 21 and later) blocked in {@code ServerSocket.accept} is interrupted: java.net closes the
     * server socket ("Closed by interrupt"), so it reads as closed and a second accept says "Socket is closed".
     */
    static String interruptVirtualAcceptor() throws Exception {
        java.util.function.Function<Runnable, Thread> virtual = virtualStarter();
        if (virtual == null) {
            return "no virtual threads on this JDK";
        }
        try (ServerSocket ss = server()) {
            AtomicReference<String> seen = new AtomicReference<>("nothing");
            CountDownLatch accepting = new CountDownLatch(1);
            Thread t = virtual.apply(() -> {
                accepting.countDown();
                try (Socket a = ss.accept()) {
                    seen.set("accepted");
                } catch (IOException e) {
                    seen.set(describe(e) + ", interrupted " + Thread.currentThread().isInterrupted());
                }
            });
            accepting.await();
            Thread.sleep(300);
            t.interrupt();
            t.join(GUARD_MILLIS);
            String second;
            try {
                // Bounded, should the server socket still be open (it is not on the JDK: this throws there).
                ss.setSoTimeout(GUARD_MILLIS);
            } catch (IOException closed) {
                // closed, as expected
            }
            try (Socket a = ss.accept()) {
                second = "accepted";
            } catch (IOException e) {
                second = describe(e);
            }
            return seen.get() + "; closed " + ss.isClosed() + "; a second accept " + second;
        }
    }

    /** As a read: an interrupted platform thread's accept goes on and takes the connection that comes later. */
    static String interruptWhileAccepting() throws Exception {
        try (ServerSocket ss = server()) {
            AtomicReference<String> seen = new AtomicReference<>("nothing");
            Thread t = new Thread(() -> {
                try (Socket a = ss.accept()) {
                    seen.set("accepted, interrupted " + Thread.currentThread().isInterrupted());
                } catch (IOException e) {
                    seen.set(describe(e) + ", interrupted " + Thread.currentThread().isInterrupted());
                }
            });
            t.start();
            Thread.sleep(300);
            t.interrupt();
            Thread.sleep(300);
            try (Socket c = connect(ss)) {
                t.join(GUARD_MILLIS);
                return seen.get() + "; server closed " + ss.isClosed();
            } catch (IOException e) {
                t.join(GUARD_MILLIS);
                return "connect: " + describe(e) + "; acceptor " + seen.get();
            }
        }
    }

    static String acceptTimeout() throws Exception {
        try (ServerSocket ss = server()) {
            ss.setSoTimeout(200);
            String first;
            try {
                first = "accepted " + ss.accept();
            } catch (IOException e) {
                first = describe(e);
            }
            ss.setSoTimeout(GUARD_MILLIS);
            try (Socket c = connect(ss); Socket a = ss.accept()) {
                return first + "; then accepts, connected " + a.isConnected() + ", timeout " + ss.getSoTimeout();
            }
        }
    }

    static String closeWhileAccepting() throws Exception {
        ServerSocket ss = server();
        AtomicReference<String> seen = new AtomicReference<>("nothing");
        Thread t = new Thread(() -> {
            try {
                seen.set("accepted " + ss.accept());
            } catch (IOException e) {
                seen.set(describe(e));
            }
        });
        t.start();
        Thread.sleep(300);
        ss.close();
        t.join(GUARD_MILLIS);
        String after;
        try {
            ss.accept();
            after = "accepted";
        } catch (IOException e) {
            after = describe(e);
        }
        return seen.get() + "; after: " + after + ", closed " + ss.isClosed();
    }

    static String connectRefused() throws Exception {
        int port;
        try (ServerSocket ss = server()) {
            port = ss.getLocalPort();
        }
        Socket s = new Socket();
        try {
            s.connect(new InetSocketAddress(LOOPBACK, port), GUARD_MILLIS);
            return "connected";
        } catch (IOException e) {
            return e.getClass().getName() + ", closed " + s.isClosed();
        }
    }

    /**
     * A server of backlog 1 that does not accept: two connects complete, a third (with a timeout) times out; once an
     * accept made room, a fourth connects.
     */
    static String backlog() throws Exception {
        StringBuilder out = new StringBuilder();
        List<Socket> open = new java.util.ArrayList<>();
        try (ServerSocket ss = new ServerSocket(0, 1, LOOPBACK)) {
            ss.setSoTimeout(GUARD_MILLIS);
            InetSocketAddress at = new InetSocketAddress(LOOPBACK, ss.getLocalPort());
            for (int i = 0; i < 3; i++) {
                Socket s = new Socket();
                open.add(s);
                try {
                    s.connect(at, 500);
                    out.append("connected; ");
                } catch (IOException e) {
                    out.append(describe(e)).append("; ");
                }
            }
            open.add(ss.accept());
            Socket s = new Socket();
            open.add(s);
            s.connect(at, GUARD_MILLIS);
            out.append("after an accept: connected");
        } finally {
            for (Socket s : open) {
                s.close();
            }
        }
        return out.toString();
    }

    /**
     * A bound socket's refused connect: closed on JDK 25, open and still bound to its port on JDK 17 (the port
     * then still taken), and a second connect after it.
     */
    static String boundConnectRefused() throws Exception {
        int port;
        try (ServerSocket ss = server()) {
            port = ss.getLocalPort();
        }
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress(LOOPBACK, 0));
            int bound = s.getLocalPort();
            String first = ScenarioRunner.attempt(() -> {
                s.connect(new InetSocketAddress(LOOPBACK, port), GUARD_MILLIS);
                return "connected";
            }, "", e -> e.getClass().getName());
            String held;
            try (Socket other = new Socket()) {
                other.bind(new InetSocketAddress(LOOPBACK, bound));
                held = "port free";
            } catch (IOException e) {
                held = "port taken";
            }
            String again;
            try (ServerSocket ss = server()) {
                again = ScenarioRunner.attempt(() -> {
                    s.connect(new InetSocketAddress(LOOPBACK, ss.getLocalPort()), GUARD_MILLIS);
                    return "connected from the bound port " + (s.getLocalPort() == bound);
                }, "", JavaNetScenarios::describe);
            }
            return first + ", closed " + s.isClosed() + ", bound " + s.isBound() + ", " + held + "; again: " + again;
        }
    }

    /**
     * An unbound socket's refused connect (without and with a timeout), then a connect to a live listener: the
     * failed connect closed the socket's implementation, so the second fails (JDK 17: "Socket closed" with
     * {@code isClosed} still false; JDK 25: the socket itself closed).
     */
    static String connectAgainAfterRefused() throws Exception {
        int port;
        try (ServerSocket ss = server()) {
            port = ss.getLocalPort();
        }
        StringBuilder sb = new StringBuilder();
        for (int timeout : new int[] {0, GUARD_MILLIS}) {
            try (Socket s = new Socket(); ServerSocket live = server()) {
                String first = ScenarioRunner.attempt(() -> {
                    s.connect(new InetSocketAddress(LOOPBACK, port), timeout);
                    return "connected";
                }, "", e -> e.getClass().getName());
                String again = ScenarioRunner.attempt(() -> {
                    s.connect(new InetSocketAddress(LOOPBACK, live.getLocalPort()), GUARD_MILLIS);
                    return "connected";
                }, "", JavaNetScenarios::describe);
                sb.append("timeout ").append(timeout > 0).append(": ").append(first).append(", closed ")
                    .append(s.isClosed()).append("; again: ").append(again).append("; ");
            }
        }
        return sb.toString();
    }

    static String options() throws Exception {
        try (ServerSocket ss = server(); Socket c = new Socket()) {
            c.setTcpNoDelay(true);
            c.setKeepAlive(true);
            c.setSoTimeout(1234);
            c.setSoLinger(true, 5);
            c.connect(new InetSocketAddress(LOOPBACK, ss.getLocalPort()), GUARD_MILLIS);
            try (Socket a = accept(ss)) {
                String before = "nodelay " + c.getTcpNoDelay() + ", keepalive " + c.getKeepAlive() + ", timeout "
                        + c.getSoTimeout() + ", linger " + c.getSoLinger();
                c.setTcpNoDelay(false);
                c.setSoLinger(false, 0);
                c.setOption(java.net.StandardSocketOptions.SO_KEEPALIVE, false);
                return before + "; after: nodelay " + c.getTcpNoDelay() + ", linger " + c.getSoLinger()
                        + ", keepalive " + c.getOption(java.net.StandardSocketOptions.SO_KEEPALIVE)
                        + ", accepted nodelay " + a.getTcpNoDelay() + ", accepted timeout " + a.getSoTimeout()
                        + ", supports SO_KEEPALIVE " + c.supportedOptions().contains(
                            java.net.StandardSocketOptions.SO_KEEPALIVE);
            }
        }
    }

    static String serverOptions() throws Exception {
        try (ServerSocket ss = new ServerSocket()) {
            ss.setReuseAddress(true);
            ss.setSoTimeout(777);
            ss.bind(new InetSocketAddress(LOOPBACK, 0), 10);
            return "reuse " + ss.getReuseAddress() + ", timeout " + ss.getSoTimeout() + ", bound " + ss.isBound()
                    + ", address " + ss.getInetAddress() + ", port>0 " + (ss.getLocalPort() > 0)
                    + ", supports SO_RCVBUF " + ss.supportedOptions().contains(java.net.StandardSocketOptions.SO_RCVBUF);
        }
    }

    static String addresses() throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
            return "client remote " + c.getInetAddress() + " port same " + (c.getPort() == ss.getLocalPort())
                    + ", local " + c.getLocalAddress() + " port>0 " + (c.getLocalPort() > 0)
                    + "; accepted remote " + a.getInetAddress() + " port same " + (a.getPort() == c.getLocalPort())
                    + ", local port same " + (a.getLocalPort() == ss.getLocalPort())
                    + "; remote socket address same " + c.getRemoteSocketAddress().equals(ss.getLocalSocketAddress())
                    + "; connected " + c.isConnected() + " bound " + c.isBound();
        }
    }

    static String available() throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
            int before = c.getInputStream().available();
            a.getOutputStream().write(new byte[] {1, 2, 3, 4, 5});
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(GUARD_MILLIS);
            int n;
            while ((n = c.getInputStream().available()) < 5 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            c.getInputStream().readNBytes(2);
            return "before " + before + ", after " + n + ", after reading 2: " + c.getInputStream().available();
        }
    }

    /**
     * One read into a large array takes at most 128 KiB, as the JDK's socket reads, however much has arrived (how
     * much the kernel's TCP holds unread depends on its buffer tuning, so the reader waits, bounded, for more than
     * that to be readable, and the read is checked against the limit).
     */
    static String largeRead() throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
            int sent = 300_000;
            a.getOutputStream().write(new byte[sent]);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (c.getInputStream().available() <= 128 * 1024 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            int read = c.getInputStream().read(new byte[1 << 20]);
            int total = read + c.getInputStream().readNBytes(sent - read).length;
            return "one read at most 128 KiB " + (read > 0 && read <= 128 * 1024) + ", all read " + (total == sent);
        }
    }

    static String peerCloses() throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
            a.getOutputStream().write(9);
            a.close();
            InputStream in = c.getInputStream();
            return "read " + in.read() + ", then " + in.read() + ", again " + in.read();
        }
    }

    static String lingerZeroResets() throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
            a.setSoLinger(true, 0);
            a.close();
            try {
                return "read " + c.getInputStream().read();
            } catch (IOException e) {
                return describe(e);
            }
        }
    }

    static String afterClose() throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
            InputStream in = c.getInputStream();
            OutputStream out = c.getOutputStream();
            c.close();
            String r = ScenarioRunner.attempt(() -> "read " + in.read(), "", JavaNetScenarios::describe);
            String w = ScenarioRunner.attempt(() -> {
                out.write(1);
                return null;
            }, "wrote", JavaNetScenarios::describe);
            String g = ScenarioRunner.attempt(() -> {
                c.getInputStream();
                return null;
            }, "got a stream", JavaNetScenarios::describe);
            return "read: " + r + "; write: " + w + "; getInputStream: " + g + "; closed " + c.isClosed()
                    + ", connected " + c.isConnected() + "; peer reads " + a.getInputStream().read();
        }
    }

    static String streamsAfterShutdown() throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
            OutputStream out = c.getOutputStream();
            c.shutdownOutput();
            c.shutdownInput();
            String w = ScenarioRunner.attempt(() -> {
                out.write(1);
                return null;
            }, "wrote", JavaNetScenarios::describe);
            String empty = ScenarioRunner.attempt(() -> {
                out.write(new byte[0]);
                return null;
            }, "wrote nothing", JavaNetScenarios::describe);
            String g = ScenarioRunner.attempt(() -> c.getOutputStream() == null ? "null" : null, "got",
                JavaNetScenarios::describe);
            String i = ScenarioRunner.attempt(() -> c.getInputStream() == null ? "null" : null, "got",
                JavaNetScenarios::describe);
            return "write: " + w + "; empty write: " + empty + "; getOutputStream: " + g + "; getInputStream: " + i
                    + "; peer reads " + a.getInputStream().read();
        }
    }

    /** A closed socket, client, accepted or server, keeps its ports and addresses (the JDK's socket does). */
    static String addressesAfterClose() throws Exception {
        ServerSocket ss = server();
        Socket c = connect(ss);
        Socket a = accept(ss);
        int serverPort = ss.getLocalPort();
        int clientPort = c.getLocalPort();
        c.close();
        a.close();
        ss.close();
        return "server: port kept " + (ss.getLocalPort() == serverPort) + ", " + ss.getInetAddress() + ", bound "
            + ss.isBound() + ", socket address kept " + ss.getLocalSocketAddress().equals(
                new InetSocketAddress(LOOPBACK, serverPort))
            + "; client: local port kept " + (c.getLocalPort() == clientPort) + ", port kept "
            + (c.getPort() == serverPort) + ", " + c.getInetAddress() + ", remote kept "
            + c.getRemoteSocketAddress().equals(new InetSocketAddress(LOOPBACK, serverPort))
            + "; accepted: local port " + (a.getLocalPort() == serverPort) + ", peer port kept "
            + (a.getPort() == clientPort) + ", " + a.getInetAddress();
    }

    /**
     * A read of a closed socket's input: "Socket closed", unless a read had already returned -1 (the JDK then
     * keeps returning -1); a read of nothing returns 0 whatever the state.
     */
    static String readAfterClose() throws Exception {
        StringBuilder out = new StringBuilder();
        for (String mode : List.of("plain", "after EOF", "after shutdownInput")) {
            try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
                InputStream in = a.getInputStream();
                String before = "";
                if (mode.equals("after EOF")) {
                    c.shutdownOutput();
                    before = " (read " + in.read() + " first)";
                } else if (mode.equals("after shutdownInput")) {
                    a.shutdownInput();
                }
                a.close();
                String r = ScenarioRunner.attempt(() -> String.valueOf(in.read()), "", JavaNetScenarios::describe);
                String empty = ScenarioRunner.attempt(() -> String.valueOf(in.read(new byte[4], 1, 0)), "",
                    JavaNetScenarios::describe);
                String av = ScenarioRunner.attempt(() -> String.valueOf(in.available()), "",
                    JavaNetScenarios::describe);
                out.append(mode).append(before).append(": read ").append(r).append(", read of nothing ")
                    .append(empty).append(", available ").append(av).append("; ");
            }
        }
        return out.toString();
    }

    /** Option values through java.net, checked and rounded as the kernel does for the JDK's socket. */
    static String optionValues() throws Exception {
        try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
            String tos = ScenarioRunner.attempt(() -> {
                c.setTrafficClass(999);
                return null;
            }, "set", JavaNetScenarios::describe);
            c.setTrafficClass(255);
            String idle = "unsupported";
            if (c.supportedOptions().contains(jdk.net.ExtendedSocketOptions.TCP_KEEPIDLE)) {
                idle = ScenarioRunner.attempt(() -> {
                    c.setOption(jdk.net.ExtendedSocketOptions.TCP_KEEPIDLE, -1);
                    return null;
                }, "set", JavaNetScenarios::describe);
            }
            c.setReceiveBufferSize(1);
            return "traffic class 999: " + tos + "; 255 reads " + c.getTrafficClass() + "; keep-alive idle -1: "
                + idle + "; receive buffer 1 reads " + c.getReceiveBufferSize() + "; accepted reuses addresses "
                + a.getReuseAddress();
        }
    }

    static String bindInUse() throws Exception {
        try (ServerSocket ss = server(); ServerSocket second = new ServerSocket()) {
            try {
                second.bind(new InetSocketAddress(LOOPBACK, ss.getLocalPort()));
                return "bound twice";
            } catch (IOException e) {
                // rdmanio's fabrics add where the address is in use after java.net's words.
                return e.getClass().getName() + ": " + e.getMessage().startsWith("Address already in use")
                        + ", closed " + second.isClosed();
            }
        }
    }

    /**
     * A client bound before it connects, three ways (bind then connect, the four-argument constructor, a port the
     * program chose): it connects, the peer sees the bound port, bytes pass, and the port stays taken while the
     * socket lives.
     */
    static String boundBeforeConnect() throws Exception {
        StringBuilder out = new StringBuilder();
        for (String way : List.of("bind", "constructor", "chosen port")) {
            try (ServerSocket ss = server()) {
                Socket c;
                if (way.equals("constructor")) {
                    c = new Socket(LOOPBACK, ss.getLocalPort(), LOOPBACK, 0);
                } else {
                    int port = 0;
                    if (way.equals("chosen port")) {
                        try (ServerSocket probe = new ServerSocket(0, 1, LOOPBACK)) {
                            port = probe.getLocalPort();
                        }
                    }
                    c = new Socket();
                    c.bind(new InetSocketAddress(LOOPBACK, port));
                    if (port != 0 && c.getLocalPort() != port) {
                        throw new IOException("bound to " + c.getLocalPort() + ", not " + port);
                    }
                    c.connect(new InetSocketAddress(LOOPBACK, ss.getLocalPort()), GUARD_MILLIS);
                }
                int bound = c.getLocalPort();
                try (c; Socket a = accept(ss)) {
                    c.getOutputStream().write(7);
                    int got = a.getInputStream().read();
                    String held;
                    try (Socket other = new Socket()) {
                        other.bind(new InetSocketAddress(LOOPBACK, bound));
                        held = "port free";
                    } catch (IOException e) {
                        held = e.getClass().getName();
                    }
                    out.append(way).append(": read ").append(got).append(", peer sees the port ")
                        .append(a.getPort() == bound).append(", local ").append(c.getLocalAddress())
                        .append(", another bind ").append(held).append("; ");
                }
            }
        }
        return out.toString();
    }

    /** The options a connected, an accepted and a server socket list, and a server socket's IP_TOS. */
    static String optionSets() throws Exception {
        try (ServerSocket ss = new ServerSocket()) {
            ss.setOption(StandardSocketOptions.IP_TOS, 0x10);
            ss.bind(new InetSocketAddress(LOOPBACK, 0));
            ss.setSoTimeout(GUARD_MILLIS);
            String before = String.valueOf(ss.getOption(StandardSocketOptions.IP_TOS));
            ss.setOption(StandardSocketOptions.IP_TOS, 255);
            String rounded = String.valueOf(ss.getOption(StandardSocketOptions.IP_TOS));
            String bad = ScenarioRunner.attempt(() -> {
                ss.setOption(StandardSocketOptions.IP_TOS, 999);
                return "set";
            }, "", JavaNetScenarios::describe);
            try (Socket c = connect(ss); Socket a = accept(ss)) {
                return "server IP_TOS set before bind " + before + ", 255 reads " + rounded + ", 999 " + bad
                    + "; client " + names(c.supportedOptions()) + "; accepted " + names(a.supportedOptions())
                    + "; server " + names(ss.supportedOptions());
            }
        }
    }

    /**
     * As Linux's accepted socket, a clone of its listener: the listener's IP_TOS and keep-alive time; and a closed
     * socket's {@code getTrafficClass}, which {@code Socket} passes to its implementation unchecked ("Socket closed").
     */
    static String acceptedInheritsListenerOptions() throws Exception {
        try (ServerSocket ss = new ServerSocket()) {
            ss.setOption(StandardSocketOptions.IP_TOS, 0x20);
            String idle = "unsupported";
            boolean keepIdle = ss.supportedOptions().contains(jdk.net.ExtendedSocketOptions.TCP_KEEPIDLE);
            if (keepIdle) {
                ss.setOption(jdk.net.ExtendedSocketOptions.TCP_KEEPIDLE, 31);
            }
            ss.bind(new InetSocketAddress(LOOPBACK, 0));
            ss.setSoTimeout(GUARD_MILLIS);
            try (Socket c = connect(ss); Socket a = accept(ss)) {
                if (keepIdle) {
                    idle = String.valueOf(a.getOption(jdk.net.ExtendedSocketOptions.TCP_KEEPIDLE));
                }
                String tos = String.valueOf(a.getTrafficClass());
                c.close();
                return "accepted IP_TOS " + tos + ", TCP_KEEPIDLE " + idle + "; closed getTrafficClass "
                    + ScenarioRunner.attempt(() -> String.valueOf(c.getTrafficClass()), "", JavaNetScenarios::describe);
            }
        }
    }

    /**
     * {@code sendUrgentData} between writes: a receiver with SO_OOBINLINE reads the byte in its place, one without
     * never sees it; after shutdownOutput and close the sender's errors.
     */
    static String urgentData() throws Exception {
        StringBuilder out = new StringBuilder();
        for (boolean inline : List.of(false, true)) {
            try (ServerSocket ss = server(); Socket c = connect(ss); Socket a = accept(ss)) {
                a.setOOBInline(inline);
                c.getOutputStream().write("ab".getBytes(StandardCharsets.US_ASCII));
                c.sendUrgentData('X');
                c.getOutputStream().write("cd".getBytes(StandardCharsets.US_ASCII));
                c.shutdownOutput();
                String got = new String(a.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
                String afterShutdown = ScenarioRunner.attempt(() -> {
                    c.sendUrgentData(1);
                    return "sent";
                }, "", JavaNetScenarios::describe);
                c.close();
                String afterClose = ScenarioRunner.attempt(() -> {
                    c.sendUrgentData(1);
                    return "sent";
                }, "", JavaNetScenarios::describe);
                out.append("inline ").append(inline).append(": read ").append(got).append(", after shutdownOutput ")
                    .append(afterShutdown).append(", after close ").append(afterClose).append("; ");
            }
        }
        return out.toString();
    }

    private static String names(java.util.Set<java.net.SocketOption<?>> options) {
        return new java.util.TreeSet<>(options.stream().map(java.net.SocketOption::name).toList()).toString();
    }

    static String nioClientToServerSocket() throws Exception {
        try (ServerSocket ss = server(); SocketChannel c = SocketChannel.open(
                new InetSocketAddress(LOOPBACK, ss.getLocalPort())); Socket a = accept(ss)) {
            c.write(ByteBuffer.wrap("from nio".getBytes(StandardCharsets.US_ASCII)));
            byte[] got = readExactly(a.getInputStream(), 8);
            a.getOutputStream().write("from net".getBytes(StandardCharsets.US_ASCII));
            ByteBuffer back = ByteBuffer.allocate(8);
            while (back.hasRemaining() && c.read(back) >= 0) {
                // blocking channel: each read waits for bytes
            }
            return new String(got, StandardCharsets.US_ASCII) + " / " + new String(back.array(), StandardCharsets.US_ASCII);
        }
    }

    static String socketToNioServer() throws Exception {
        try (ServerSocketChannel ss = ServerSocketChannel.open()) {
            ss.bind(new InetSocketAddress(LOOPBACK, 0));
            int port = ((InetSocketAddress) ss.getLocalAddress()).getPort();
            try (Socket c = new Socket()) {
                c.connect(new InetSocketAddress(LOOPBACK, port), GUARD_MILLIS);
                c.setSoTimeout(GUARD_MILLIS);
                try (SocketChannel a = ss.accept()) {
                    c.getOutputStream().write("from net".getBytes(StandardCharsets.US_ASCII));
                    ByteBuffer got = ByteBuffer.allocate(8);
                    while (got.hasRemaining() && a.read(got) >= 0) {
                        // blocking channel
                    }
                    a.write(ByteBuffer.wrap("from nio".getBytes(StandardCharsets.US_ASCII)));
                    byte[] back = readExactly(c.getInputStream(), 8);
                    return new String(got.array(), StandardCharsets.US_ASCII) + " / "
                            + new String(back, StandardCharsets.US_ASCII);
                }
            }
        }
    }

    /** HttpURLConnection (java.net) against the JDK's own HTTP server (NIO), two requests on one connection. */
    static String httpUrlConnection() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress(LOOPBACK, 0), 0);
        server.createContext("/", exchange -> {
            byte[] body = ("hello " + exchange.getRequestURI().getPath()).getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        try {
            StringBuilder sb = new StringBuilder();
            for (String path : new String[] {"/a", "/b"}) {
                URL url = new URL("http://127.0.0.1:" + server.getAddress().getPort() + path);
                HttpURLConnection conn = (HttpURLConnection) url.openConnection(java.net.Proxy.NO_PROXY);
                conn.setConnectTimeout(GUARD_MILLIS);
                conn.setReadTimeout(GUARD_MILLIS);
                try (InputStream in = conn.getInputStream()) {
                    sb.append(conn.getResponseCode()).append(' ')
                        .append(new String(in.readAllBytes(), StandardCharsets.US_ASCII)).append("; ");
                }
            }
            return sb.toString().trim();
        } finally {
            server.stop(0);
        }
    }

    /** HttpURLConnection against unmodified Jetty (NIO): a static file of 6 MiB and dynamic bodies, byte-exact. */
    static String httpUrlConnectionToJetty() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("jetty-content");
        io.rdmanio.examples.jetty.Content.writeFiles(dir);
        try (io.rdmanio.examples.jetty.JettyServer jetty = new io.rdmanio.examples.jetty.JettyServer("127.0.0.1", 0,
                dir)) {
            StringBuilder sb = new StringBuilder();
            byte[] blob = java.nio.file.Files.readAllBytes(dir.resolve("blob.bin"));
            sb.append("blob.bin same ").append(java.util.Arrays.equals(blob, get(jetty.port(), "/blob.bin")));
            for (int n : io.rdmanio.examples.jetty.Content.DYNAMIC_SIZES) {
                sb.append(", ").append(n).append(" same ").append(java.util.Arrays.equals(
                    io.rdmanio.examples.jetty.Content.dynamic(n),
                    get(jetty.port(), io.rdmanio.examples.jetty.Content.DYNAMIC_PREFIX + n)));
            }
            return sb.toString();
        } finally {
            try (var files = java.nio.file.Files.list(dir)) {
                for (java.nio.file.Path f : (Iterable<java.nio.file.Path>) files::iterator) {
                    java.nio.file.Files.delete(f);
                }
            }
            java.nio.file.Files.delete(dir);
        }
    }

    private static byte[] get(int port, String path) throws IOException {
        HttpURLConnection conn = (HttpURLConnection) new URL("http://127.0.0.1:" + port + path).openConnection();
        conn.setConnectTimeout(GUARD_MILLIS);
        conn.setReadTimeout(GUARD_MILLIS);
        try (InputStream in = conn.getInputStream()) {
            if (conn.getResponseCode() != 200) {
                throw new IOException(path + ": HTTP " + conn.getResponseCode());
            }
            return in.readAllBytes();
        }
    }

    /**
     * TLS over java.net: an SSLServerSocket and an SSLSocket (the JDK's own TLS, layered on the sockets the
     * factories make), a self-signed key made with the JDK's keytool; 256 KiB echoed, byte-exact.
     */
    static String tls() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("tls");
        java.nio.file.Path store = dir.resolve("key.p12");
        char[] pass = "changeit".toCharArray();
        try {
            Process keytool = new ProcessBuilder(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "keytool")
                .toString(), "-genkeypair", "-alias", "s", "-keyalg", "EC", "-dname", "CN=localhost", "-validity", "2",
                "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", "changeit")
                .redirectErrorStream(true).redirectOutput(dir.resolve("keytool.out").toFile()).start();
            if (!keytool.waitFor(60, TimeUnit.SECONDS) || keytool.exitValue() != 0) {
                return "keytool failed: " + java.nio.file.Files.readString(dir.resolve("keytool.out"));
            }
            java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
            try (InputStream in = java.nio.file.Files.newInputStream(store)) {
                ks.load(in, pass);
            }
            javax.net.ssl.KeyManagerFactory kmf = javax.net.ssl.KeyManagerFactory.getInstance("PKIX");
            kmf.init(ks, pass);
            javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance("PKIX");
            tmf.init(ks);
            javax.net.ssl.SSLContext ctx = javax.net.ssl.SSLContext.getInstance("TLSv1.3");
            ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
            try (javax.net.ssl.SSLServerSocket ss = (javax.net.ssl.SSLServerSocket) ctx.getServerSocketFactory()
                    .createServerSocket(0, 50, LOOPBACK)) {
                ss.setSoTimeout(GUARD_MILLIS);
                Thread t = new Thread(() -> {
                    try (Socket a = ss.accept()) {
                        a.setSoTimeout(GUARD_MILLIS);
                        byte[] got = a.getInputStream().readNBytes(256 * 1024);
                        a.getOutputStream().write(got);
                        a.getOutputStream().flush();
                    } catch (IOException e) {
                        System.out.println("tls server: " + describe(e));
                    }
                });
                t.start();
                String result;
                try (javax.net.ssl.SSLSocket c = (javax.net.ssl.SSLSocket) ctx.getSocketFactory()
                        .createSocket(LOOPBACK, ss.getLocalPort())) {
                    c.setSoTimeout(GUARD_MILLIS);
                    byte[] data = new byte[256 * 1024];
                    new java.util.Random(5).nextBytes(data);
                    c.getOutputStream().write(data);
                    c.getOutputStream().flush();
                    byte[] back = c.getInputStream().readNBytes(data.length);
                    result = c.getSession().getProtocol() + ", " + back.length + " bytes, same: "
                            + java.util.Arrays.equals(data, back);
                }
                // Joined after the client's close: the server's close waits for the client's close_notify.
                t.join(GUARD_MILLIS);
                return result;
            }
        } finally {
            try (var files = java.nio.file.Files.list(dir)) {
                for (java.nio.file.Path f : (Iterable<java.nio.file.Path>) files::iterator) {
                    java.nio.file.Files.delete(f);
                }
            }
            java.nio.file.Files.delete(dir);
        }
    }
}
