package io.rdmanio.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The connection test: a client and an echo server, in two processes (one for loopback, whose fabric connects only
 * within a JVM), ping-pong 1 KiB messages over one connection for a fixed time with a deliberately small credit
 * window ({@code -Drdmanio.ringDepth=2}, and SO_RCVBUF/SO_SNDBUF of 4 KiB on both ends, which also shrinks TCP's
 * window). The client keeps {@code inflight} messages outstanding, so writes regularly find no credit and must
 * wait for OP_WRITE. Every echoed byte is checked.
 *
 * <pre>
 * ConnectionTest [--seconds N] [--transports tcp,loopback,shm] [--inflight N] [--json FILE]
 * </pre>
 *
 * <p>Prints round trips per second and errors (mismatched bytes, exceptions, stalls of 10 s) per transport, and
 * the engines' receiver-not-ready and protocol-error counters from the run summaries of the processes.
 */
public final class ConnectionTest {
    static final int SIZE = 1024;
    static final int SOCKET_BUFFER = 4096;
    static final String RING_DEPTH = "-Drdmanio.ringDepth=2";

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = parse(args);
        int seconds = Integer.parseInt(opts.getOrDefault("seconds", "99"));
        int inflight = Integer.parseInt(opts.getOrDefault("inflight", "8"));
        switch (opts.getOrDefault("role", "orchestrator")) {
            case "client":
                runClient(new InetSocketAddress(opts.get("host"), Integer.parseInt(opts.get("port"))), seconds,
                        inflight);
                return;
            case "pair":
                try (EchoServer s = new EchoServer(new InetSocketAddress("127.0.0.1", 0), SOCKET_BUFFER).start()) {
                    runClient(s.address(), seconds, inflight);
                }
                return;
            default:
                List<Transport> transports = new ArrayList<>();
                for (String t : opts.getOrDefault("transports", "tcp,loopback,shm").split(",")) {
                    transports.add(Transport.of(t.trim()));
                }
                List<Result> results = orchestrate(transports, seconds, inflight);
                System.out.print(table(results));
                if (opts.containsKey("json")) {
                    Files.writeString(Path.of(opts.get("json")), json(results, seconds, inflight));
                }
        }
    }

    /** One transport's outcome; {@code skipped} is a reason when it did not run. */
    public static final class Result {
        public final String transport;
        public long roundTrips;
        public double seconds;
        public long errors;
        public long receiverNotReady;
        public long protocolErrors;
        public String firstError;
        public String skipped;

        Result(String transport) {
            this.transport = transport;
        }

        public double perSecond() {
            return seconds > 0 ? roundTrips / seconds : 0;
        }
    }

    public static List<Result> orchestrate(List<Transport> transports, int seconds, int inflight)
            throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("rdmanio-conntest");
        Path rules = Transport.writeRules(dir);
        List<Result> results = new ArrayList<>();
        for (Transport t : transports) {
            Result r = new Result(t.label());
            results.add(r);
            String reason = t.unavailableReason();
            if (reason != null) {
                r.skipped = reason;
                System.out.println("connection test: " + t.label() + " skipped: " + reason);
                continue;
            }
            System.out.println("connection test: " + t.label() + " for " + seconds + " s ...");
            System.out.flush();
            runOne(t, rules, dir, seconds, inflight, r);
            System.out.printf(Locale.ROOT, "connection test: %s: %.0f round trips/s, %d errors%n", t.label(),
                    r.perSecond(), r.errors);
        }
        return results;
    }

    private static void runOne(Transport t, Path rules, Path dir, int seconds, int inflight, Result r)
            throws IOException, InterruptedException {
        Process server = null;
        List<Path> stats = new ArrayList<>();
        try {
            List<String> client = new ArrayList<>(javaCommand(t, rules));
            Path clientStats = dir.resolve(t.label() + "-client-stats.json");
            if (t != Transport.TCP) {
                client.add("-Drdmanio.stats=" + clientStats);
                stats.add(clientStats);
            }
            client.add(ConnectionTest.class.getName());
            if (t.inProcessOnly()) {
                client.addAll(List.of("--role", "pair"));
            } else {
                List<String> cmd = new ArrayList<>(javaCommand(t, rules));
                Path serverStats = dir.resolve(t.label() + "-server-stats.json");
                if (t != Transport.TCP) {
                    cmd.add("-Drdmanio.stats=" + serverStats);
                    stats.add(serverStats);
                }
                int port = ServerHandle.freePort();
                cmd.addAll(List.of(EchoServer.class.getName(), t.host(), Integer.toString(port),
                        Integer.toString(SOCKET_BUFFER)));
                server = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
                String ready = new BufferedReader(new InputStreamReader(server.getInputStream(),
                        StandardCharsets.UTF_8)).readLine();
                if (ready == null || !ready.startsWith("READY")) {
                    r.errors++;
                    r.firstError = "the server did not start: " + ready;
                    return;
                }
                client.addAll(List.of("--role", "client", "--host", t.host(), "--port", Integer.toString(port)));
            }
            client.addAll(List.of("--seconds", Integer.toString(seconds), "--inflight", Integer.toString(inflight)));
            Process c = new ProcessBuilder(client).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            c.getOutputStream().close();
            try (BufferedReader out = new BufferedReader(new InputStreamReader(c.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = out.readLine()) != null) {
                    if (line.startsWith("RESULT ")) {
                        readResult(line, r);
                    } else {
                        System.out.println("  " + t.label() + ": " + line);
                        System.out.flush();
                    }
                }
            }
            if (!c.waitFor(seconds + 60L, TimeUnit.SECONDS)) {
                c.destroyForcibly();
                r.errors++;
                r.firstError = "the client did not finish";
            } else if (c.exitValue() != 0 && r.firstError == null) {
                r.errors++;
                r.firstError = "the client exited with status " + c.exitValue();
            }
        } finally {
            if (server != null) {
                server.getOutputStream().close();
                if (!server.waitFor(10, TimeUnit.SECONDS)) {
                    server.destroyForcibly();
                }
            }
        }
        for (Path s : stats) {
            if (Files.exists(s)) {
                String text = Files.readString(s);
                r.receiverNotReady += sum(text, "receiverNotReady");
                r.protocolErrors += sum(text, "protocolErrors");
            } else {
                r.errors++;
                r.firstError = r.firstError != null ? r.firstError : "no run summary at " + s;
            }
        }
    }

    private static List<String> javaCommand(Transport t, Path rules) {
        return t.javaCommand(rules, "-Xms256m", "-Xmx256m", RING_DEPTH);
    }

    private static long sum(String json, String field) {
        Matcher m = Pattern.compile("\"" + field + "\"\\s*:\\s*(\\d+)").matcher(json);
        long total = 0;
        while (m.find()) {
            total += Long.parseLong(m.group(1));
        }
        return total;
    }

    private static void readResult(String line, Result r) {
        for (String kv : line.substring("RESULT ".length()).split(" ", 5)) {
            int eq = kv.indexOf('=');
            String k = kv.substring(0, eq);
            String v = kv.substring(eq + 1);
            switch (k) {
                case "roundTrips": r.roundTrips = Long.parseLong(v); break;
                case "seconds": r.seconds = Double.parseDouble(v); break;
                case "errors": r.errors += Long.parseLong(v); break;
                case "firstError": r.firstError = v.equals("-") ? r.firstError : v; break;
                default: break;
            }
        }
    }

    /** The client: keeps {@code inflight} 1 KiB messages outstanding and checks every echoed byte. */
    static void runClient(InetSocketAddress address, int seconds, int inflight) throws IOException {
        long errors = 0;
        String firstError = null;
        long received = 0;
        long start = System.nanoTime();
        long end = start + TimeUnit.SECONDS.toNanos(seconds);
        long now = start;
        try (Selector selector = Selector.open(); SocketChannel ch = SocketChannel.open()) {
            ch.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER);
            ch.setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ch.connect(address);
            ch.write(ByteBuffer.wrap(new byte[] {EchoServer.ECHO}));
            ch.configureBlocking(false);
            SelectionKey key = ch.register(selector, SelectionKey.OP_READ);
            ByteBuffer out = ByteBuffer.allocateDirect(SIZE);
            ByteBuffer in = ByteBuffer.allocateDirect(SIZE);
            out.limit(0);
            long sent = 0;
            long lastProgress = now;
            long nextReport = start + TimeUnit.SECONDS.toNanos(10);
            while (now < end) {
                if (!out.hasRemaining() && sent - received < inflight) {
                    fill(out, sent++);
                }
                if (out.hasRemaining()) {
                    ch.write(out);
                }
                int n = ch.read(in);
                if (n < 0) {
                    throw new IOException("the server closed the connection after " + received + " round trips");
                }
                if (!in.hasRemaining()) {
                    long bad = check(in, received);
                    if (bad >= 0) {
                        errors++;
                        if (firstError == null) {
                            firstError = "message " + received + " differs at byte " + bad;
                        }
                    }
                    received++;
                    in.clear();
                    lastProgress = now;
                }
                boolean canSend = out.hasRemaining() || sent - received < inflight;
                if (n == 0 && (out.hasRemaining() || !canSend)) {
                    // Nothing to do until the peer answers or credit returns.
                    int ops = out.hasRemaining() ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ;
                    if (key.interestOps() != ops) {
                        key.interestOps(ops);
                    }
                    selector.select(1000);
                    selector.selectedKeys().clear();
                }
                now = System.nanoTime();
                if (now - lastProgress > TimeUnit.SECONDS.toNanos(10)) {
                    throw new IOException("stalled: no echo for 10 s after " + received + " round trips");
                }
                if (now >= nextReport) {
                    System.out.printf(Locale.ROOT, "%3d s: %,d round trips, %d errors%n",
                            TimeUnit.NANOSECONDS.toSeconds(now - start), received, errors);
                    System.out.flush();
                    nextReport += TimeUnit.SECONDS.toNanos(10);
                }
            }
        } catch (IOException | RuntimeException e) {
            errors++;
            firstError = firstError != null ? firstError : e.toString();
        }
        double secs = (System.nanoTime() - start) / 1e9;
        System.out.printf(Locale.ROOT, "RESULT roundTrips=%d seconds=%.3f errors=%d firstError=%s%n", received, secs,
                errors, firstError == null ? "-" : firstError.replace(' ', '_'));
        System.out.flush();
    }

    /** Message {@code seq}: its number in the first 8 bytes, then bytes that depend on it and their offset. */
    private static void fill(ByteBuffer b, long seq) {
        b.clear();
        b.putLong(0, seq);
        for (int i = 8; i < SIZE; i++) {
            b.put(i, (byte) (seq * 7 + i));
        }
    }

    /** The offset of the first wrong byte of message {@code seq}, or -1 when it is exact. */
    private static long check(ByteBuffer b, long seq) {
        if (b.getLong(0) != seq) {
            return 0;
        }
        for (int i = 8; i < SIZE; i++) {
            if (b.get(i) != (byte) (seq * 7 + i)) {
                return i;
            }
        }
        return -1;
    }

    public static String table(List<Result> results) {
        double tcp = results.stream().filter(r -> r.transport.equals("tcp") && r.skipped == null)
                .mapToDouble(Result::perSecond).findFirst().orElse(0);
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%-10s %14s %9s %7s %10s %10s%n", "transport", "round trips/s",
                "vs tcp", "errors", "rnr", "protoErr"));
        for (Result r : results) {
            if (r.skipped != null) {
                sb.append(String.format(Locale.ROOT, "%-10s skipped: %s%n", r.transport, r.skipped));
                continue;
            }
            sb.append(String.format(Locale.ROOT, "%-10s %14.0f %9s %7d %10d %10d%n", r.transport, r.perSecond(),
                    tcp > 0 ? String.format(Locale.ROOT, "%.2fx", r.perSecond() / tcp) : "-", r.errors,
                    r.receiverNotReady, r.protocolErrors));
            if (r.firstError != null) {
                sb.append("           first error: ").append(r.firstError).append('\n');
            }
        }
        return sb.toString();
    }

    public static String json(List<Result> results, int seconds, int inflight) {
        StringBuilder sb = new StringBuilder("{\"seconds\": " + seconds + ", \"inflight\": " + inflight
                + ", \"messageBytes\": " + SIZE + ", \"socketBuffer\": " + SOCKET_BUFFER
                + ", \"ringDepth\": 2, \"results\": [");
        String sep = "";
        for (Result r : results) {
            sb.append(sep).append(String.format(Locale.ROOT,
                    "{\"transport\": \"%s\", \"skipped\": %s, \"roundTrips\": %d, \"seconds\": %.3f, "
                            + "\"roundTripsPerSecond\": %.1f, \"errors\": %d, \"receiverNotReady\": %d, "
                            + "\"protocolErrors\": %d, \"firstError\": %s}",
                    r.transport, quote(r.skipped), r.roundTrips, r.seconds, r.perSecond(), r.errors,
                    r.receiverNotReady, r.protocolErrors, quote(r.firstError)));
            sep = ", ";
        }
        return sb.append("]}\n").toString();
    }

    static String quote(String s) {
        return s == null ? "null" : "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --name value pairs, got " + String.join(" ", args));
            }
            m.put(args[i].substring(2), args[++i]);
        }
        return m;
    }
}
