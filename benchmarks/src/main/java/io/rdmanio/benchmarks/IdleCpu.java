package io.rdmanio.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Idle CPU: what a process with open, quiet connections costs. A client opens {@value #CONNECTIONS} connections
 * to an echo server (in another process, or in the client's JVM for loopback), exchanges one message on each,
 * then leaves them registered with a selector blocked in {@code select()} and one more thread blocked in a
 * {@code read}. The orchestrator reads both processes' CPU time ({@link ProcessHandle.Info#totalCpuDuration()})
 * across a quiet window, then lets the client check that every connection still echoes.
 *
 * <p>A JVM does a little work of its own when nothing happens (the JIT and GC threads, timers), so the number to
 * compare is each fabric's against the JDK's TCP measured the same way in the same run.
 */
public final class IdleCpu {
    static final int CONNECTIONS = 16;
    private static final int MESSAGE = 64;

    private IdleCpu() {
    }

    /** One transport's outcome: CPU milliseconds per second of the quiet window, per process. */
    public static final class Result {
        public final String transport;
        public double clientMsPerSecond = Double.NaN;
        public double serverMsPerSecond = Double.NaN;
        public String error;
        public String skipped;

        Result(String transport) {
            this.transport = transport;
        }
    }

    /** {@code IdleCpu --client HOST PORT} or {@code IdleCpu --pair}: the client role (started by the orchestrator). */
    public static void main(String[] args) throws Exception {
        if (args.length >= 1 && args[0].equals("--pair")) {
            try (EchoServer s = new EchoServer(new InetSocketAddress("127.0.0.1", 0), 0).start()) {
                client(s.address());
            }
        } else if (args.length == 3 && args[0].equals("--client")) {
            client(new InetSocketAddress(args[1], Integer.parseInt(args[2])));
        } else {
            System.err.println("usage: IdleCpu --client HOST PORT | --pair");
            System.exit(2);
        }
    }

    /** Opens the connections, says IDLE, waits for a line (or EOF) on stdin, checks them, says OK. */
    private static void client(InetSocketAddress server) throws Exception {
        List<SocketChannel> channels = new ArrayList<>();
        ByteBuffer out = ByteBuffer.allocateDirect(MESSAGE);
        ByteBuffer in = ByteBuffer.allocateDirect(MESSAGE);
        try (Selector selector = Selector.open()) {
            for (int i = 0; i < CONNECTIONS + 1; i++) {
                SocketChannel ch = SocketChannel.open(server);
                ch.write(ByteBuffer.wrap(new byte[] {EchoServer.ECHO}));
                echo(ch, out, in, i);
                channels.add(ch);
            }
            for (SocketChannel ch : channels.subList(0, CONNECTIONS)) {
                ch.configureBlocking(false);
                ch.register(selector, SelectionKey.OP_READ);
            }
            SocketChannel blocked = channels.get(CONNECTIONS);
            Thread reader = new Thread(() -> {
                try {
                    ByteBuffer b = ByteBuffer.allocate(MESSAGE);
                    blocked.read(b);
                } catch (IOException e) {
                    // closed at the end: expected
                }
            }, "idle-blocked-read");
            reader.setDaemon(true);
            reader.start();
            Thread selecting = new Thread(() -> {
                try {
                    while (selector.isOpen() && selector.select() == 0 && !Thread.currentThread().isInterrupted()) {
                        // woken without readiness (the end's wakeup): look again or leave
                    }
                } catch (IOException | java.nio.channels.ClosedSelectorException e) {
                    // closed at the end
                }
            }, "idle-select");
            selecting.setDaemon(true);
            selecting.start();
            System.out.println("IDLE " + ProcessHandle.current().pid());
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            if (!selecting.isAlive()) {
                throw new IllegalStateException("select reported readiness during the quiet window");
            }
            selecting.interrupt();
            selector.wakeup();
            selecting.join(TimeUnit.SECONDS.toMillis(10));
            for (SelectionKey k : selector.keys()) {
                k.cancel();
            }
            selector.selectNow();
            for (int i = 0; i < CONNECTIONS; i++) {
                SocketChannel ch = channels.get(i);
                ch.configureBlocking(true);
                echo(ch, out, in, 1000 + i);
            }
        } finally {
            for (SocketChannel ch : channels) {
                ch.close();
            }
        }
        System.out.println("OK " + CONNECTIONS + " connections still echo");
    }

    /** Sends {@code out}'s 64 bytes, a pattern from {@code seed}, and checks that they come back exactly. */
    static void echo(SocketChannel ch, ByteBuffer out, ByteBuffer in, int seed) throws IOException {
        out.clear();
        for (int j = 0; j < MESSAGE; j++) {
            out.put(j, (byte) (seed + j));
        }
        while (out.hasRemaining()) {
            ch.write(out);
        }
        in.clear();
        while (in.hasRemaining()) {
            if (ch.read(in) < 0) {
                throw new IOException("the echo server closed a connection");
            }
        }
        if (in.flip().compareTo(out.flip()) != 0) {
            throw new IOException("an echo differs from what was sent");
        }
    }

    /** Measures each transport over a quiet window of {@code seconds}. */
    public static List<Result> orchestrate(List<Transport> transports, int seconds) throws Exception {
        Path dir = Files.createTempDirectory("rdmanio-idle");
        Path rules = Transport.writeRules(dir);
        List<Result> results = new ArrayList<>();
        for (Transport t : transports) {
            Result r = new Result(t.label());
            results.add(r);
            r.skipped = t.unavailableReason();
            if (r.skipped != null) {
                continue;
            }
            System.out.println("idle CPU: " + t.label() + ", " + CONNECTIONS + " quiet connections for " + seconds
                    + " s ...");
            System.out.flush();
            try {
                runOne(t, rules, seconds, r);
            } catch (IOException | RuntimeException e) {
                r.error = e.toString();
            }
        }
        return results;
    }

    private static void runOne(Transport t, Path rules, int seconds, Result r) throws Exception {
        Process server = null;
        Process client = null;
        try {
            List<String> cmd = javaCommand(t, rules);
            cmd.add(IdleCpu.class.getName());
            if (t.inProcessOnly()) {
                cmd.add("--pair");
            } else {
                List<String> s = javaCommand(t, rules);
                int port = ServerHandle.freePort();
                s.addAll(List.of(EchoServer.class.getName(), t.host(), Integer.toString(port)));
                server = new ProcessBuilder(s).redirectError(ProcessBuilder.Redirect.INHERIT).start();
                String ready = new BufferedReader(new InputStreamReader(server.getInputStream(),
                        StandardCharsets.UTF_8)).readLine();
                if (ready == null || !ready.startsWith("READY")) {
                    throw new IOException("the echo server did not start: " + ready);
                }
                cmd.addAll(List.of("--client", t.host(), Integer.toString(port)));
            }
            client = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(client.getInputStream(),
                    StandardCharsets.UTF_8));
            String idle = out.readLine();
            if (idle == null || !idle.startsWith("IDLE")) {
                throw new IOException("the client did not reach its quiet state: " + idle);
            }
            // Let start-up work (JIT compilation of what the set-up ran) finish before the window opens.
            Thread.sleep(2000);
            Duration c0 = cpu(client);
            Duration s0 = server == null ? null : cpu(server);
            long t0 = System.nanoTime();
            Thread.sleep(seconds * 1000L);
            Duration c1 = cpu(client);
            Duration s1 = server == null ? null : cpu(server);
            double window = (System.nanoTime() - t0) / 1e9;
            r.clientMsPerSecond = c1.minus(c0).toNanos() / 1e6 / window;
            if (server != null) {
                r.serverMsPerSecond = s1.minus(s0).toNanos() / 1e6 / window;
            }
            OutputStream stdin = client.getOutputStream();
            stdin.write('\n');
            stdin.close();
            String ok = out.readLine();
            if (ok == null || !ok.startsWith("OK")) {
                throw new IOException("after the quiet window the connections did not all echo: " + ok);
            }
            if (!client.waitFor(30, TimeUnit.SECONDS)) {
                throw new IOException("the client did not finish");
            }
        } finally {
            if (client != null) {
                client.destroyForcibly();
            }
            if (server != null) {
                server.getOutputStream().close();
                if (!server.waitFor(10, TimeUnit.SECONDS)) {
                    server.destroyForcibly();
                }
            }
        }
    }

    private static Duration cpu(Process p) throws IOException {
        return p.info().totalCpuDuration()
                .orElseThrow(() -> new IOException("this system does not report process " + p.pid() + "'s CPU time"));
    }

    private static List<String> javaCommand(Transport t, Path rules) {
        return t.javaCommand(rules, "-Xmx256m");
    }

    /** The side-by-side table. */
    public static String table(List<Result> results) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-10s %22s %22s%n", "transport",
                "client CPU ms/s", "server CPU ms/s"));
        for (Result r : results) {
            if (r.skipped != null) {
                sb.append(String.format(Locale.ROOT, "%-10s skipped: %s%n", r.transport, r.skipped));
            } else if (r.error != null) {
                sb.append(String.format(Locale.ROOT, "%-10s FAILED: %s%n", r.transport, r.error));
            } else {
                sb.append(String.format(Locale.ROOT, "%-10s %22.2f %22s%n", r.transport, r.clientMsPerSecond,
                        Double.isNaN(r.serverMsPerSecond) ? "(same JVM)"
                                : String.format(Locale.ROOT, "%.2f", r.serverMsPerSecond)));
            }
        }
        return sb.toString();
    }

    /** The results as JSON. */
    public static String json(List<Result> results, int seconds) {
        StringBuilder sb = new StringBuilder("{\"connections\": " + CONNECTIONS + ", \"seconds\": " + seconds
                + ", \"results\": [");
        String sep = "";
        for (Result r : results) {
            sb.append(sep).append(String.format(Locale.ROOT,
                    "{\"transport\": \"%s\", \"clientCpuMsPerSecond\": %s, \"serverCpuMsPerSecond\": %s, "
                            + "\"skipped\": %s, \"error\": %s}",
                    r.transport, num(r.clientMsPerSecond), num(r.serverMsPerSecond), str(r.skipped), str(r.error)));
            sep = ", ";
        }
        return sb.append("]}\n").toString();
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "null" : String.format(Locale.ROOT, "%.3f", v);
    }

    private static String str(String s) {
        return s == null ? "null" : "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
