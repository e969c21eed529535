package io.rdmanio.selector.shm;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32;

/**
 * A plain java.nio peer for the cross-process tests, driven line by line on stdin, answering on stdout. It knows
 * nothing of rdmanio: the JVM it runs in is activated by system property. It holds one listener and one
 * connection at a time, in blocking mode.
 *
 * <pre>
 * listen               -> PORT p            bind 127.0.0.1:0
 * accept               -> ACCEPTED
 * connect p            -> CONNECTED         (or CONNECT-FAILED exception)
 * write n seed         -> WROTE n           the pattern of pattern
 * read n               -> READ n crc        exactly n bytes (fewer at end of stream)
 * readall              -> EOF n crc         until end of stream
 * shutout              -> SHUT              shutdownOutput
 * close                -> CLOSED
 * reset                -> RESET             SO_LINGER 0, then close
 * stream               -> STREAMING         a thread writes until it fails
 * serve                -> SERVING           a thread accepts, echoes one byte, reads to end, closes, repeatedly
 *                                           (SERVE-FAILED exception for a connection that fails)
 * connectloop p        -> LOOPING           a thread connects, writes a byte, closes, repeatedly
 * burst p n            -> LOOPING           n threads connect, write a byte, close, repeatedly
 * vburst p n           -> BURST ok failed first-error   n virtual threads (Java 21+) connect at once, each
 *                                           writes a byte, reads its echo and closes (NO-VIRTUAL-THREADS before 21)
 * nbhold p n           -> PENDING, then HELD ok failed first-error   n non-blocking connects started at once,
 *                                           finished through a selector (bounded) and kept open
 * served               -> SERVED n          connections the serve thread has taken
 * closelisten          -> LISTEN-CLOSED     closes the listener
 * fds                  -> FDS n             open descriptors of this process
 * exit                                      exit 0
 * </pre>
 * Any failure prints {@code ERROR exception} and the peer carries on.
 */
public final class NioPeerMain {

    private static final PrintStream OUT = System.out;

    private ServerSocketChannel server;
    private SocketChannel ch;
    private final java.util.List<SocketChannel> held = new java.util.ArrayList<>();
    private final java.util.concurrent.atomic.AtomicLong served = new java.util.concurrent.atomic.AtomicLong();

    public static void main(String[] args) throws Exception {
        OUT.println("PROVIDER " + SelectorProvider.provider().getClass().getName());
        OUT.flush();
        new NioPeerMain().run();
    }

    private void run() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split("\\s+");
            try {
                if (!command(w)) {
                    break;
                }
            } catch (Exception e) {
                say("ERROR " + e);
            }
        }
        System.exit(0);
    }

    private static void say(String s) {
        synchronized (OUT) {
            OUT.println(s);
            OUT.flush();
        }
    }

    private boolean command(String[] w) throws Exception {
        switch (w[0]) {
            case "listen":
                server = ServerSocketChannel.open();
                server.bind(new InetSocketAddress("127.0.0.1", 0));
                say("PORT " + ((InetSocketAddress) server.getLocalAddress()).getPort());
                return true;
            case "accept":
                ch = server.accept();
                say("ACCEPTED");
                return true;
            case "connect":
                try {
                    ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", Integer.parseInt(w[1])));
                    say("CONNECTED");
                } catch (IOException e) {
                    say("CONNECT-FAILED " + e);
                }
                return true;
            case "write": {
                byte[] data = pattern(Integer.parseInt(w[1]), Integer.parseInt(w[2]));
                ByteBuffer b = ByteBuffer.wrap(data);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                say("WROTE " + data.length);
                return true;
            }
            case "read": {
                ByteBuffer b = ByteBuffer.allocate(Integer.parseInt(w[1]));
                while (b.hasRemaining() && ch.read(b) >= 0) {
                    // until full or end of stream
                }
                CRC32 crc = new CRC32();
                crc.update(b.array(), 0, b.position());
                say("READ " + b.position() + " " + crc.getValue());
                return true;
            }
            case "readall": {
                ByteBuffer b = ByteBuffer.allocate(64 * 1024);
                CRC32 crc = new CRC32();
                long n = 0;
                int k;
                while ((k = ch.read(b.clear())) >= 0) {
                    crc.update(b.array(), 0, k);
                    n += k;
                }
                say("EOF " + n + " " + crc.getValue());
                return true;
            }
            case "shutout":
                ch.shutdownOutput();
                say("SHUT");
                return true;
            case "close":
                ch.close();
                say("CLOSED");
                return true;
            case "reset":
                ch.setOption(StandardSocketOptions.SO_LINGER, 0);
                ch.close();
                say("RESET");
                return true;
            case "stream":
                background("stream", () -> {
                    ByteBuffer b = ByteBuffer.wrap(pattern(256 * 1024, 3));
                    while (true) {
                        ch.write(b.clear());
                    }
                });
                say("STREAMING");
                return true;
            case "serve":
                background("serve", () -> {
                    ByteBuffer one = ByteBuffer.allocate(1);
                    ByteBuffer rest = ByteBuffer.allocate(64);
                    while (true) {
                        try (SocketChannel c = server.accept()) {
                            served.incrementAndGet();
                            one.clear();
                            while (one.hasRemaining() && c.read(one) >= 0) {
                                // one byte
                            }
                            c.write(one.flip());
                            while (c.read(rest.clear()) >= 0) {
                                // until the client closes
                            }
                        } catch (IOException e) {
                            // One connection's failure is reported; the server carries on with the next.
                            say("SERVE-FAILED connection " + served.get() + ": " + e);
                        }
                    }
                });
                say("SERVING");
                return true;
            case "connectloop": {
                int port = Integer.parseInt(w[1]);
                background("connectloop", () -> {
                    while (true) {
                        try (SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", port))) {
                            c.write(ByteBuffer.wrap(new byte[] {7}));
                        } catch (IOException e) {
                            // a refused connect is one of the outcomes the survivor is tested against
                        }
                    }
                });
                say("LOOPING");
                return true;
            }
            case "burst": {
                int port = Integer.parseInt(w[1]);
                for (int i = Integer.parseInt(w[2]); i > 0; i--) {
                    background("burst", () -> {
                        while (true) {
                            try (SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", port))) {
                                c.write(ByteBuffer.wrap(new byte[] {7}));
                            } catch (IOException e) {
                                // a refused connect is one of the outcomes the survivor is tested against
                            }
                        }
                    });
                }
                say("LOOPING");
                return true;
            }
            case "vburst":
                virtualBurst(Integer.parseInt(w[1]), Integer.parseInt(w[2]));
                return true;
            case "nbhold":
                holdNonBlocking(Integer.parseInt(w[1]), Integer.parseInt(w[2]));
                return true;
            case "served":
                say("SERVED " + served.get());
                return true;
            case "closelisten":
                server.close();
                say("LISTEN-CLOSED");
                return true;
            case "fds":
                try (var s = Files.list(Path.of("/proc/self/fd"))) {
                    say("FDS " + s.count());
                }
                return true;
            case "fdlist":
                say("FDLIST " + descriptorTargets());
                return true;
            case "exit":
                return false;
            default:
                say("ERROR unknown command " + w[0]);
                return true;
        }
    }

    /** What each open descriptor names (a file, a socket, a pipe, an anonymous inode), sorted, comma-separated. */
    private static String descriptorTargets() throws IOException {
        java.util.List<String> names = new java.util.ArrayList<>();
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) s::iterator) {
                try {
                    names.add(Files.readSymbolicLink(fd).toString());
                } catch (IOException e) {
                    // the descriptor closed while listed (the listing's own among them)
                }
            }
        }
        java.util.Collections.sort(names);
        return String.join(",", names);
    }

    /** Starts {@code n} non-blocking connects at once, finishes them through a selector and keeps them open. */
    private void holdNonBlocking(int port, int n) throws IOException {
        InetSocketAddress to = new InetSocketAddress("127.0.0.1", port);
        int ok = 0;
        int failed = 0;
        String first = "none";
        int pending = 0;
        try (java.nio.channels.Selector sel = java.nio.channels.Selector.open()) {
            for (int i = 0; i < n; i++) {
                SocketChannel c = SocketChannel.open();
                held.add(c);
                c.configureBlocking(false);
                try {
                    if (c.connect(to)) {
                        ok++;
                    } else {
                        c.register(sel, java.nio.channels.SelectionKey.OP_CONNECT);
                        pending++;
                    }
                } catch (IOException e) {
                    if (failed++ == 0) {
                        first = e.toString().replace(' ', '_');
                    }
                }
            }
            say("PENDING");
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
            while (pending > 0 && System.nanoTime() - deadline < 0) {
                sel.select(100);
                for (java.nio.channels.SelectionKey k : sel.selectedKeys()) {
                    SocketChannel c = (SocketChannel) k.channel();
                    try {
                        if (!c.finishConnect()) {
                            continue;
                        }
                        ok++;
                    } catch (IOException e) {
                        if (failed++ == 0) {
                            first = e.toString().replace(' ', '_');
                        }
                    }
                    k.cancel();
                    pending--;
                }
                sel.selectedKeys().clear();
            }
        }
        say("HELD " + ok + " " + failed + " " + first);
    }

    /**
     * {@code n} virtual threads (looked up reflectively: this class is compiled for Java 17) each connect to
     * {@code port} at once, write a byte, read its echo and close; says how many succeeded.
     */
    private static void virtualBurst(int port, int n) throws Exception {
        java.util.concurrent.ExecutorService pool;
        try {
            pool = (java.util.concurrent.ExecutorService) java.util.concurrent.Executors.class
                .getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        } catch (NoSuchMethodException e) {
            say("NO-VIRTUAL-THREADS");
            return;
        }
        java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
        java.util.List<java.util.concurrent.Future<?>> all = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            all.add(pool.submit(() -> {
                start.await();
                try (SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", port))) {
                    ByteBuffer b = ByteBuffer.wrap(new byte[] {42});
                    c.write(b);
                    b.clear();
                    while (b.hasRemaining()) {
                        if (c.read(b) < 0) {
                            throw new IOException("end of stream before the echo");
                        }
                    }
                    if (b.get(0) != 42) {
                        throw new IOException("wrong echo " + b.get(0));
                    }
                }
                return null;
            }));
        }
        start.countDown();
        int ok = 0;
        int failed = 0;
        String first = "none";
        for (java.util.concurrent.Future<?> f : all) {
            try {
                f.get(60, java.util.concurrent.TimeUnit.SECONDS);
                ok++;
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                if (failed++ == 0) {
                    first = String.valueOf(e.getCause() == null ? e : e.getCause()).replace(' ', '_');
                }
            }
        }
        pool.shutdownNow();
        say("BURST " + ok + " " + failed + " " + first);
    }

    /** A deterministic byte pattern of {@code n} bytes, the same in every JVM. */
    static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        int x = seed * 31 + 7;
        for (int i = 0; i < n; i++) {
            x = x * 1103515245 + 12345;
            b[i] = (byte) (x >>> 16);
        }
        return b;
    }

    static long crc(byte[] b, int off, int len) {
        CRC32 crc = new CRC32();
        crc.update(b, off, len);
        return crc.getValue();
    }

    private interface Body {
        void run() throws Exception;
    }

    private static void background(String name, Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Exception e) {
                say("ENDED " + name + " " + e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
    }
}
