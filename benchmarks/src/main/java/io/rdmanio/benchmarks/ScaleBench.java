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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Scale: what idle connections cost a busy one, and what a connection costs to open and to hold. A main, not JMH:
 * the echo server runs in a second JVM (the same {@link EchoServer}, the same flags), the client in a third.
 *
 * <ul>
 *   <li><b>Round trip beside idle connections</b> ({@code rtt}): one connection does 64 B selector round trips
 *       while 0, 500, 2,000 other connections, each opened with one echo and then left quiet, are registered
 *       for {@code OP_READ} with the same selector (and, at the server, with its one selector).</li>
 *   <li><b>Connections</b> ({@code connect}): N connections opened one after another, each with a 64 B echo
 *       (so the accept really happened), then held; the rate of opening them, and what holding them costs each
 *       process: resident memory, descriptors and mappings, per connection, read from {@code /proc}.</li>
 * </ul>
 *
 * <pre>
 * ScaleBench [--transports tcp,shm] [--idle 0,500,2000] [--connections 1000,5000] [--repeat N] [--seconds S]
 * </pre>
 */
public final class ScaleBench {
    private static final int MESSAGE = 64;
    /** Connections opened before the memory baseline is read, so class loading and JIT are behind it. */
    private static final int WARM_CONNECTIONS = 50;

    private ScaleBench() {
    }

    /** One round-trip point: latency in microseconds with that many idle connections beside the busy one. */
    public static final class RttResult {
        public final String transport;
        public final int idle;
        public double p50 = Double.NaN;
        public double mean = Double.NaN;
        public double p99 = Double.NaN;
        public String error;

        RttResult(String transport, int idle) {
            this.transport = transport;
            this.idle = idle;
        }
    }

    /** One connection-count point. */
    public static final class ConnectResult {
        public final String transport;
        public final int connections;
        public double perSecond = Double.NaN;
        public double clientKbPerConnection = Double.NaN;
        public double serverKbPerConnection = Double.NaN;
        public double clientFdsPerConnection = Double.NaN;
        public double serverFdsPerConnection = Double.NaN;
        public double clientMapsPerConnection = Double.NaN;
        public double serverMapsPerConnection = Double.NaN;
        public String error;

        ConnectResult(String transport, int connections) {
            this.transport = transport;
            this.connections = connections;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length >= 1 && args[0].equals("--client")) {
            client(args);
            return;
        }
        List<Transport> transports = List.of(Transport.TCP, Transport.SHM);
        int[] idle = {0, 500, 2000};
        int[] connections = {1000, 5000};
        int repeat = 1;
        int seconds = 2;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--transports" -> transports = Stream.of(args[++i].split(",")).map(Transport::of).toList();
                case "--idle" -> idle = ints(args[++i]);
                case "--connections" -> connections = ints(args[++i]);
                case "--repeat" -> repeat = Integer.parseInt(args[++i]);
                case "--seconds" -> seconds = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("usage: ScaleBench [--transports tcp,shm] [--idle 0,500,2000]"
                        + " [--connections 1000,5000] [--repeat N] [--seconds S]");
                    System.exit(2);
                }
            }
        }
        for (int r = 0; r < repeat; r++) {
            if (idle.length > 0) {
                System.out.print(rttTable(rtt(transports, idle, seconds)));
            }
            if (connections.length > 0) {
                System.out.print(connectTable(connect(transports, connections)));
            }
            System.out.flush();
        }
    }

    private static int[] ints(String list) {
        return list.isEmpty() ? new int[0] : Stream.of(list.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    // -------------------------------------------------------------------------------------------------------------
    // Orchestration.

    /** The round trip of one busy connection beside each number of idle ones, per transport (one client JVM each). */
    public static List<RttResult> rtt(List<Transport> transports, int[] idle, int seconds) throws Exception {
        Path rules = Transport.writeRules(Files.createTempDirectory("rdmanio-scale"));
        List<RttResult> results = new ArrayList<>();
        for (Transport t : transports) {
            List<RttResult> mine = new ArrayList<>();
            for (int n : idle) {
                mine.add(new RttResult(t.label(), n));
            }
            results.addAll(mine);
            if (t.unavailableReason() != null || t.inProcessOnly()) {
                mine.forEach(r -> r.error = t.inProcessOnly() ? "needs two processes" : t.unavailableReason());
                continue;
            }
            System.out.println("scale: " + t.label() + " round trip beside " + Arrays.toString(idle)
                + " idle connections ...");
            System.out.flush();
            try (Pair p = Pair.start(t, rules, "rtt", join(idle), Integer.toString(seconds))) {
                for (RttResult r : mine) {
                    String line = p.line();
                    if (line == null || !line.startsWith("RTT ")) {
                        throw new IOException("the client stopped: " + line);
                    }
                    String[] f = line.split(" ");
                    r.p50 = Double.parseDouble(f[2]);
                    r.mean = Double.parseDouble(f[3]);
                    r.p99 = Double.parseDouble(f[4]);
                }
            } catch (IOException | RuntimeException e) {
                mine.stream().filter(r -> Double.isNaN(r.p50)).forEach(r -> r.error = e.getMessage());
            }
        }
        return results;
    }

    /** Opens and holds each number of connections, per transport (a fresh pair of JVMs for each point). */
    public static List<ConnectResult> connect(List<Transport> transports, int[] counts) throws Exception {
        Path rules = Transport.writeRules(Files.createTempDirectory("rdmanio-scale"));
        List<ConnectResult> results = new ArrayList<>();
        for (int n : counts) {
            for (Transport t : transports) {
                ConnectResult r = new ConnectResult(t.label(), n);
                results.add(r);
                if (t.unavailableReason() != null || t.inProcessOnly()) {
                    r.error = t.inProcessOnly() ? "needs two processes" : t.unavailableReason();
                    continue;
                }
                System.out.println("scale: " + t.label() + ", " + n + " connections ...");
                System.out.flush();
                try (Pair p = Pair.start(t, rules, "connect", Integer.toString(n))) {
                    String base = p.line();
                    if (base == null || !base.startsWith("BASE ")) {
                        throw new IOException("the client stopped before its baseline: " + base);
                    }
                    long[] server0 = usage(p.server.pid());
                    String[] b = base.split(" ");
                    String done = p.line();
                    if (done == null || !done.startsWith("HELD ")) {
                        throw new IOException(done == null ? "the client stopped" : done);
                    }
                    Thread.sleep(500);
                    long[] server1 = usage(p.server.pid());
                    String[] d = done.split(" ");
                    r.perSecond = n / Double.parseDouble(d[1]);
                    r.clientKbPerConnection = (Long.parseLong(d[2]) - Long.parseLong(b[1])) / (double) n;
                    r.clientFdsPerConnection = (Long.parseLong(d[3]) - Long.parseLong(b[2])) / (double) n;
                    r.clientMapsPerConnection = (Long.parseLong(d[4]) - Long.parseLong(b[3])) / (double) n;
                    r.serverKbPerConnection = (server1[0] - server0[0]) / (double) n;
                    r.serverFdsPerConnection = (server1[1] - server0[1]) / (double) n;
                    r.serverMapsPerConnection = (server1[2] - server0[2]) / (double) n;
                } catch (IOException | RuntimeException e) {
                    r.error = e.getMessage();
                }
            }
        }
        return results;
    }

    private static String join(int[] values) {
        StringBuilder sb = new StringBuilder();
        for (int v : values) {
            sb.append(sb.length() == 0 ? "" : ",").append(v);
        }
        return sb.toString();
    }

    /** An echo server JVM and a client JVM of this class, on one transport. */
    private static final class Pair implements AutoCloseable {
        final Process server;
        final Process client;
        final BufferedReader out;

        private Pair(Process server, Process client) {
            this.server = server;
            this.client = client;
            this.out = new BufferedReader(new InputStreamReader(client.getInputStream(), StandardCharsets.UTF_8));
        }

        static Pair start(Transport t, Path rules, String... clientArgs) throws IOException {
            int port = ServerHandle.freePort();
            List<String> s = java(t, rules);
            s.addAll(List.of(EchoServer.class.getName(), t.host(), Integer.toString(port)));
            Process server = new ProcessBuilder(s).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            String ready = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))
                .readLine();
            if (ready == null || !ready.startsWith("READY")) {
                server.destroyForcibly();
                throw new IOException("the echo server did not start: " + ready);
            }
            List<String> c = java(t, rules);
            c.addAll(List.of(ScaleBench.class.getName(), "--client", t.host(), Integer.toString(port)));
            c.addAll(List.of(clientArgs));
            Process client = new ProcessBuilder(c).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            return new Pair(server, client);
        }

        String line() throws IOException {
            return out.readLine();
        }

        @Override
        public void close() throws IOException {
            OutputStream in = client.getOutputStream();
            try {
                in.write('\n');
                in.close();
            } catch (IOException e) {
                // the client is gone already
            }
            try {
                if (!client.waitFor(30, TimeUnit.SECONDS)) {
                    client.destroyForcibly();
                }
                server.getOutputStream().close();
                if (!server.waitFor(10, TimeUnit.SECONDS)) {
                    server.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                client.destroyForcibly();
                server.destroyForcibly();
            }
        }

        private static List<String> java(Transport t, Path rules) {
            return t.javaCommand(rules, "-Xmx512m");
        }
    }

    /** A process's resident set (KiB), open descriptors and mappings, from /proc. */
    static long[] usage(long pid) throws IOException {
        long rss = -1;
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                rss = Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        long fds;
        try (Stream<Path> s = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            fds = s.count();
        }
        long maps;
        try (Stream<String> s = Files.lines(Path.of("/proc/" + pid + "/maps"))) {
            maps = s.count();
        }
        return new long[] {rss, fds, maps};
    }

    // -------------------------------------------------------------------------------------------------------------
    // The client role.

    private static void client(String[] args) throws Exception {
        InetSocketAddress server = new InetSocketAddress(args[1], Integer.parseInt(args[2]));
        String mode = args[3];
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        List<SocketChannel> channels = new ArrayList<>();
        ByteBuffer out = ByteBuffer.allocateDirect(MESSAGE);
        ByteBuffer in = ByteBuffer.allocateDirect(MESSAGE);
        try {
            if (mode.equals("rtt")) {
                clientRtt(server, ints(args[4]), Integer.parseInt(args[5]), channels, out, in);
            } else {
                int n = Integer.parseInt(args[4]);
                for (int i = 0; i < WARM_CONNECTIONS; i++) {
                    channels.add(openEchoed(server, out, in, i));
                }
                System.gc();
                long[] base = usage(ProcessHandle.current().pid());
                System.out.println("BASE " + base[0] + " " + base[1] + " " + base[2]);
                System.out.flush();
                long t0 = System.nanoTime();
                try {
                    for (int i = 0; i < n; i++) {
                        channels.add(openEchoed(server, out, in, i));
                    }
                } catch (IOException e) {
                    System.out.println("FAILED after " + (channels.size() - WARM_CONNECTIONS) + " connections: " + e);
                    System.out.flush();
                    stdin.readLine();
                    return;
                }
                double secs = (System.nanoTime() - t0) / 1e9;
                System.gc();
                Thread.sleep(500);
                long[] now = usage(ProcessHandle.current().pid());
                System.out.println(String.format(Locale.ROOT, "HELD %.6f %d %d %d", secs, now[0], now[1], now[2]));
                System.out.flush();
            }
            stdin.readLine();
        } finally {
            for (SocketChannel ch : channels) {
                ch.close();
            }
        }
    }

    private static void clientRtt(InetSocketAddress server, int[] idle, int seconds, List<SocketChannel> channels,
                                  ByteBuffer out, ByteBuffer in) throws IOException {
        try (Selector selector = Selector.open()) {
            SocketChannel busy = SocketChannel.open(server);
            busy.write(ByteBuffer.wrap(new byte[] {EchoServer.ECHO}));
            busy.configureBlocking(false);
            SelectionKey busyKey = busy.register(selector, SelectionKey.OP_READ);
            long[] samples = new long[4_000_000];
            for (int target : idle) {
                while (channels.size() < target) {
                    SocketChannel ch = openEchoed(server, out, in, channels.size());
                    ch.configureBlocking(false);
                    ch.register(selector, SelectionKey.OP_READ);
                    channels.add(ch);
                }
                long warmEnd = System.nanoTime() + 500_000_000L;
                while (System.nanoTime() - warmEnd < 0) {
                    roundTrip(busy, busyKey, selector, out, in);
                }
                int n = 0;
                long end = System.nanoTime() + seconds * 1_000_000_000L;
                while (n < samples.length && System.nanoTime() - end < 0) {
                    long t0 = System.nanoTime();
                    roundTrip(busy, busyKey, selector, out, in);
                    samples[n++] = System.nanoTime() - t0;
                }
                Arrays.sort(samples, 0, n);
                double sum = 0;
                for (int i = 0; i < n; i++) {
                    sum += samples[i];
                }
                System.out.println(String.format(Locale.ROOT, "RTT %d %.1f %.1f %.1f %d", target,
                    samples[n / 2] / 1e3, sum / n / 1e3, samples[(int) (n * 0.99)] / 1e3, n));
                System.out.flush();
            }
        }
    }

    /** One 64 B echo on the busy connection, waiting in the selector every idle connection is registered with. */
    private static void roundTrip(SocketChannel ch, SelectionKey key, Selector selector, ByteBuffer out,
                                  ByteBuffer in) throws IOException {
        out.clear();
        while (out.hasRemaining()) {
            ch.write(out);
        }
        in.clear();
        while (in.hasRemaining()) {
            selector.select();
            boolean mine = selector.selectedKeys().remove(key);
            if (!selector.selectedKeys().isEmpty()) {
                throw new IOException("an idle connection became ready");
            }
            if (mine && ch.read(in) < 0) {
                throw new IOException("the echo server closed the busy connection");
            }
        }
    }

    /** Opens a connection in echo mode and checks one echo on it. */
    private static SocketChannel openEchoed(InetSocketAddress server, ByteBuffer out, ByteBuffer in, int seed)
        throws IOException {
        SocketChannel ch = SocketChannel.open(server);
        try {
            ch.write(ByteBuffer.wrap(new byte[] {EchoServer.ECHO}));
            IdleCpu.echo(ch, out, in, seed);
        } catch (IOException e) {
            ch.close();
            throw e;
        }
        return ch;
    }

    // -------------------------------------------------------------------------------------------------------------
    // Tables.

    public static String rttTable(List<RttResult> results) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
            "%nround trip, 64 B, one busy connection beside idle ones (us: p50 mean p99)%n%-10s %8s %24s%n",
            "transport", "idle", "p50 / mean / p99"));
        for (RttResult r : results) {
            sb.append(r.error != null
                ? String.format(Locale.ROOT, "%-10s %8d   FAILED: %s%n", r.transport, r.idle, r.error)
                : String.format(Locale.ROOT, "%-10s %8d %8.1f %8.1f %8.1f%n", r.transport, r.idle, r.p50, r.mean,
                    r.p99));
        }
        return sb.toString();
    }

    public static String connectTable(List<ConnectResult> results) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
            "%nconnections opened (each with one 64 B echo) and held%n%-10s %6s %10s %18s %18s %16s%n", "transport",
            "n", "conn/s", "KiB/conn cli srv", "fds/conn cli srv", "maps/conn cli srv"));
        for (ConnectResult r : results) {
            sb.append(r.error != null
                ? String.format(Locale.ROOT, "%-10s %6d   FAILED: %s%n", r.transport, r.connections, r.error)
                : String.format(Locale.ROOT, "%-10s %6d %10.0f %8.1f %8.1f %8.2f %8.2f %8.2f %7.2f%n", r.transport,
                    r.connections, r.perSecond, r.clientKbPerConnection, r.serverKbPerConnection,
                    r.clientFdsPerConnection, r.serverFdsPerConnection, r.clientMapsPerConnection,
                    r.serverMapsPerConnection));
        }
        return sb.toString();
    }
}
