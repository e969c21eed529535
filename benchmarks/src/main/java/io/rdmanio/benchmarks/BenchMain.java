package io.rdmanio.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the benchmarks on every transport this machine has, side by side with the JDK's TCP in one run, and prints
 * the table with ratios to TCP.
 *
 * <pre>
 * BenchMain --quick [--results DIR]      a few minutes: 64 B and 4 KiB round trips, a 1 MiB stream, a 10 s connection
 *                                        test, 3 s of idle CPU
 * BenchMain [--results DIR]              everything; JMH JSON per benchmark and transport under DIR
 * BenchMain --only G1,G2 [--results DIR]  only those groups (RoundTripBench, StreamBench, ConnectBench,
 *                                        ManyConnectionsBench, ConnectionTest, IdleCpu, Scale), full settings
 * BenchMain --profile [--results DIR]    the shm 64 B round trip and 1 MiB stream under JMH's stack profiler
 * ... --transports tcp,T[,T...]          only these transports (tcp always: every row is a ratio to it)
 * </pre>
 *
 * <p>Every transport this machine can run is measured: disni where an RDMA device serves an addressed network
 * interface (its rows run on that address), the others on 127.0.0.1.
 *
 * <p>The class path must hold the benchmarks jar and the agent jar ({@code selector/target/rdmanio-agent.jar}):
 * JMH's forks inherit it, and the flags of each transport decide whether the agent's provider is used.
 */
public final class BenchMain {
    private final boolean quick;
    /** With {@code --only}: the benchmark groups (and {@code ConnectionTest}) to run; null runs everything. */
    private List<String> only;
    private final Path results;
    private final Path rules;
    private final Path hdrDir;
    private final List<Transport> transports = new ArrayList<>();
    private final List<Row> rows = new ArrayList<>();
    private final long started = System.nanoTime();

    /** One measured point: a benchmark, its parameters and transport, and what was measured. */
    static final class Row {
        String group;
        String transport;
        Map<String, String> params = new LinkedHashMap<>();
        double score;
        String unit;
        double p50;
        double p99;
        double p999;
        double allocPerOp = Double.NaN;
        String hdr;
    }

    private BenchMain(boolean quick, Path results, List<String> only) throws IOException {
        this.quick = quick;
        this.results = results;
        Path tmp = Files.createTempDirectory("rdmanio-bench");
        rules = Transport.writeRules(tmp);
        hdrDir = Files.createDirectories(tmp.resolve("hdr"));
        Files.createDirectories(results);
        for (Transport t : Transport.values()) {
            if (only != null && !only.contains(t.label())) {
                continue;
            }
            String reason = t.unavailableReason();
            if (reason == null) {
                transports.add(t);
            } else {
                System.out.println("skipping " + t.label() + ": " + reason);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        boolean quick = false;
        boolean profile = false;
        List<String> onlyGroups = null;
        List<String> onlyTransports = null;
        Path results = Path.of("benchmarks", "results");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick": quick = true; break;
                case "--profile": profile = true; break;
                case "--results": results = Path.of(args[++i]); break;
                case "--only": onlyGroups = List.of(args[++i].split(",")); break;
                case "--transports": onlyTransports = List.of(args[++i].split(",")); break;
                default: throw new IllegalArgumentException("unknown argument " + args[i]
                        + " (expected --quick, --profile, --only GROUP[,GROUP...], --transports T[,T...], --results DIR)");
            }
        }
        if (onlyTransports != null) {
            for (String t : onlyTransports) {
                Transport.of(t);
            }
            if (!onlyTransports.contains("tcp")) {
                throw new IllegalArgumentException("--transports must include tcp: every row is a ratio to it");
            }
        }
        BenchMain m = new BenchMain(quick, results, onlyTransports);
        m.only = onlyGroups;
        System.out.println(Machine.describe());
        Files.writeString(results.resolve("machine.json"), Machine.json());
        if (profile) {
            m.profile();
        } else if (quick) {
            m.runQuick();
        } else {
            m.runFull();
        }
    }

    private void runQuick() throws Exception {
        int steps = transports.size() * 2 + 3;
        int step = 0;
        for (Transport t : transports) {
            run(++step, steps, "RoundTripBench", t, Map.of("size", new String[] {"64", "4096"},
                    "io", new String[] {"selector"}), false);
        }
        for (Transport t : transports) {
            run(++step, steps, "StreamBench", t, Map.of("size", new String[] {"1048576"}), false);
        }
        System.out.printf(Locale.ROOT, "[%d/%d] connection test, 10 s per transport (%.0f s so far)%n", ++step,
                steps, elapsed());
        List<ConnectionTest.Result> conn = ConnectionTest.orchestrate(transports, 10, 8);
        System.out.printf(Locale.ROOT, "[%d/%d] idle CPU, 3 s per transport (%.0f s so far)%n", ++step, steps,
                elapsed());
        List<IdleCpu.Result> idle = IdleCpu.orchestrate(transports, 3);
        System.out.printf(Locale.ROOT, "[%d/%d] scale: a round trip beside 0, 500, 2000 idle connections; 1000"
                + " connections opened and held (%.0f s so far)%n", ++step, steps, elapsed());
        String scale = scale(new int[] {1000}, 1);
        String report = tables() + "\nconnection test (1 KiB, 8 in flight, ringDepth=2, 4 KiB socket buffers, 10 s)\n"
                + ConnectionTest.table(conn) + idleHeading(3) + IdleCpu.table(idle) + scale;
        System.out.println();
        System.out.print(report);
        System.out.printf(Locale.ROOT, "%ntotal %.0f s%n", elapsed());
        Files.writeString(results.resolve("quick.txt"), Machine.describe() + "\n" + report);
    }

    private void runFull() throws Exception {
        List<String> groups = new ArrayList<>(List.of("RoundTripBench", "StreamBench", "ConnectBench",
                "ManyConnectionsBench"));
        boolean connectionTest = only == null || only.contains("ConnectionTest");
        if (only != null) {
            groups.retainAll(only);
        }
        boolean idleCpu = only == null || only.contains("IdleCpu");
        boolean scale = only == null || only.contains("Scale");
        int steps = transports.size() * groups.size() + (connectionTest ? 1 : 0) + (idleCpu ? 1 : 0)
                + (scale ? 1 : 0);
        int step = 0;
        for (String group : groups) {
            for (Transport t : transports) {
                run(++step, steps, group, t, Map.of(), !group.equals("ConnectBench"));
            }
        }
        String report = tables();
        if (connectionTest) {
            int seconds = Integer.getInteger("bench.connectionTest.seconds", 99);
            System.out.printf(Locale.ROOT, "[%d/%d] connection test, %d s per transport (%.0f s so far)%n", ++step,
                    steps, seconds, elapsed());
            List<ConnectionTest.Result> conn = ConnectionTest.orchestrate(transports, seconds, 8);
            Files.writeString(results.resolve("ConnectionTest.json"), ConnectionTest.json(conn, seconds, 8));
            report += "\nconnection test (1 KiB, 8 in flight, ringDepth=2, 4 KiB socket buffers, " + seconds + " s)\n"
                    + ConnectionTest.table(conn);
        }
        if (idleCpu) {
            int seconds = 10;
            System.out.printf(Locale.ROOT, "[%d/%d] idle CPU, %d s per transport (%.0f s so far)%n", ++step, steps,
                    seconds, elapsed());
            List<IdleCpu.Result> idle = IdleCpu.orchestrate(transports, seconds);
            Files.writeString(results.resolve("IdleCpu.json"), IdleCpu.json(idle, seconds));
            report += idleHeading(seconds) + IdleCpu.table(idle);
        }
        if (scale) {
            System.out.printf(Locale.ROOT, "[%d/%d] scale: a round trip beside 0, 500, 2000 idle connections; 1000"
                    + " and 5000 connections opened and held (%.0f s so far)%n", ++step, steps, elapsed());
            report += scale(new int[] {1000, 5000}, 3);
        }
        System.out.println();
        System.out.print(report);
        System.out.printf(Locale.ROOT, "%ntotal %.0f s%n", elapsed());
        Files.writeString(results.resolve(only == null ? "summary.txt" : "summary-" + String.join("-", only) + ".txt"),
                Machine.describe() + "\n" + report);
    }

    /**
     * {@link ScaleBench} on the transports with two processes (loopback needs one JVM for both ends, and the point
     * is what idle connections of another process cost): the round trip beside idle connections, then
     * {@code counts} connections opened and held.
     */
    private String scale(int[] counts, int seconds) throws Exception {
        List<Transport> two = new ArrayList<>();
        for (Transport t : transports) {
            if (!t.inProcessOnly()) {
                two.add(t);
            }
        }
        List<ScaleBench.RttResult> rtt = ScaleBench.rtt(two, new int[] {0, 500, 2000}, seconds);
        List<ScaleBench.ConnectResult> held = ScaleBench.connect(two, counts);
        String text = ScaleBench.rttTable(rtt) + ScaleBench.connectTable(held);
        Files.writeString(results.resolve("scale.txt"), text);
        return text;
    }

    private static String idleHeading(int seconds) {
        return "\nidle CPU (" + IdleCpu.CONNECTIONS + " quiet connections in a blocked select, one blocked read, "
                + seconds + " s; the kernel counts CPU time in 10 ms ticks)\n";
    }

    /** JMH's stack profiler on the shm hot paths: the 64 B selector round trip and the 1 MiB stream. */
    private void profile() throws RunnerException {
        profileOne("RoundTripBench", Map.of("size", new String[] {"64"}, "io", new String[] {"selector"}),
                "profile-shm-roundtrip.txt");
        profileOne("StreamBench", Map.of("size", new String[] {"1048576"}), "profile-shm-stream.txt");
    }

    private void profileOne(String group, Map<String, String[]> params, String file) throws RunnerException {
        Path out = results.resolve(file);
        System.out.printf(Locale.ROOT, "profiling %s on shm %s; output in %s%n", group, describe(params), out);
        ChainedOptionsBuilder o = options(group, Transport.SHM, params)
                .addProfiler("stack", "lines=4;top=20;detailLine=true")
                .output(out.toString());
        new Runner(o.build()).run();
    }

    private ChainedOptionsBuilder options(String group, Transport t, Map<String, String[]> params) {
        List<String> flags = new ArrayList<>(t.jvmFlags(rules));
        flags.add("-Dbench.hdr.dir=" + hdrDir);
        ChainedOptionsBuilder o = new OptionsBuilder()
                .include("io\\.rdmanio\\.benchmarks\\." + group + "\\.")
                .param("transport", t.label())
                .jvmArgsAppend(flags.toArray(new String[0]))
                .shouldFailOnError(true);
        for (Map.Entry<String, String[]> p : params.entrySet()) {
            o.param(p.getKey(), p.getValue());
        }
        if (quick) {
            o.warmupIterations(2).warmupTime(TimeValue.seconds(1))
                    .measurementIterations(3).measurementTime(TimeValue.seconds(1));
        }
        return o;
    }

    private void run(int step, int steps, String group, Transport t, Map<String, String[]> params, boolean gc)
            throws RunnerException, IOException {
        String name = group + "-" + t.label();
        System.out.printf(Locale.ROOT, "[%d/%d] %s on %s%s (%.0f s so far) ...%n", step, steps, group, t.label(),
                params.isEmpty() ? "" : " " + describe(params), elapsed());
        System.out.flush();
        ChainedOptionsBuilder o = options(group, t, params)
                .resultFormat(ResultFormatType.JSON)
                .result(results.resolve(name + ".json").toString())
                .output(results.resolve(name + ".log").toString());
        if (gc) {
            o.addProfiler("gc");
        }
        Collection<RunResult> rr;
        try {
            rr = new Runner(o.build()).run();
        } catch (RunnerException e) {
            System.out.println("    FAILED: " + e.getMessage() + " (see " + results.resolve(name + ".log") + ")");
            return;
        }
        for (RunResult r : rr) {
            Row row = new Row();
            row.group = group;
            row.transport = t.label();
            for (String k : r.getParams().getParamsKeys()) {
                if (!k.equals("transport")) {
                    row.params.put(k, r.getParams().getParam(k));
                }
            }
            Result<?> primary = r.getPrimaryResult();
            row.score = primary.getScore();
            row.unit = primary.getScoreUnit();
            if (primary.getStatistics().getN() > 0) {
                row.p50 = primary.getStatistics().getPercentile(50);
                row.p99 = primary.getStatistics().getPercentile(99);
                row.p999 = primary.getStatistics().getPercentile(99.9);
            }
            Result<?> alloc = r.getSecondaryResults().get("gc.alloc.rate.norm");
            if (alloc != null) {
                row.allocPerOp = alloc.getScore();
            }
            row.hdr = readHdr(r);
            rows.add(row);
            System.out.println("    " + line(row));
        }
    }

    private String readHdr(RunResult r) throws IOException {
        StringBuilder key = new StringBuilder(r.getParams().getBenchmark());
        for (String k : r.getParams().getParamsKeys()) {
            key.append('-').append(r.getParams().getParam(k));
        }
        Path f = hdrDir.resolve(key.toString().replaceAll("[^A-Za-z0-9._-]", "_") + ".json");
        if (!Files.exists(f)) {
            return null;
        }
        String text = Files.readString(f);
        Files.writeString(results.resolve("hdr-" + f.getFileName()), text);
        return text;
    }

    private static String describe(Map<String, String[]> params) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, String[]> p : params.entrySet()) {
            sb.append(sb.length() == 0 ? "" : " ").append(p.getKey()).append('=').append(String.join(",", p.getValue()));
        }
        return sb.toString();
    }

    private static String line(Row row) {
        StringBuilder sb = new StringBuilder(row.params.toString()).append(": ");
        if (row.group.equals("StreamBench")) {
            sb.append(String.format(Locale.ROOT, "%.1f MB/s", mbps(row)));
        } else {
            sb.append(String.format(Locale.ROOT, "mean %.1f %s, p50 %.1f, p99 %.1f, p99.9 %.1f", row.score, row.unit,
                    row.p50, row.p99, row.p999));
        }
        if (!Double.isNaN(row.allocPerOp)) {
            sb.append(String.format(Locale.ROOT, ", %.1f B allocated/op", row.allocPerOp));
        }
        if (row.hdr != null) {
            sb.append(", hdr p50/p99/p99.9 ").append(hdrField(row.hdr, "p50_us")).append('/')
                    .append(hdrField(row.hdr, "p99_us")).append('/').append(hdrField(row.hdr, "p999_us")).append(" us");
        }
        return sb.toString();
    }

    static double mbps(Row row) {
        return row.score * Integer.parseInt(row.params.get("size")) / 1e6;
    }

    static String hdrField(String json, String field) {
        Matcher m = Pattern.compile("\"" + field + "\": ([0-9.]+)").matcher(json);
        return m.find() ? m.group(1) : "?";
    }

    /** The side-by-side tables of what ran, with ratios to TCP. */
    private String tables() {
        List<String> labels = new ArrayList<>();
        for (Row r : rows) {
            if (!labels.contains(r.transport)) {
                labels.add(r.transport);
            }
        }
        StringBuilder sb = new StringBuilder();
        Map<String, Map<String, Row>> byKey = new LinkedHashMap<>();
        for (Row r : rows) {
            String key = r.group + " " + r.params;
            byKey.computeIfAbsent(key, k -> new LinkedHashMap<>()).put(r.transport, r);
        }
        sb.append(String.format(Locale.ROOT, "%-52s", "benchmark (latency: mean us, p50/p99; stream: MB/s)"));
        for (String l : labels) {
            sb.append(String.format(Locale.ROOT, " %26s", l));
        }
        sb.append('\n');
        for (Map.Entry<String, Map<String, Row>> e : byKey.entrySet()) {
            Row tcp = e.getValue().get("tcp");
            sb.append(String.format(Locale.ROOT, "%-52s", e.getKey()));
            for (String l : labels) {
                Row r = e.getValue().get(l);
                String cell;
                if (r == null) {
                    cell = "-";
                } else if (r.group.equals("StreamBench")) {
                    cell = String.format(Locale.ROOT, "%.0f", mbps(r));
                    if (tcp != null && r != tcp) {
                        cell += String.format(Locale.ROOT, " (%.2fx)", mbps(r) / mbps(tcp));
                    }
                } else {
                    cell = String.format(Locale.ROOT, "%.1f %.0f/%.0f", r.score, r.p50, r.p99);
                    if (tcp != null && r != tcp) {
                        cell += String.format(Locale.ROOT, " (%.2fx)", r.score / tcp.score);
                    }
                }
                sb.append(String.format(Locale.ROOT, " %26s", cell));
            }
            sb.append('\n');
        }
        boolean anyAlloc = rows.stream().anyMatch(r -> !Double.isNaN(r.allocPerOp));
        if (anyAlloc) {
            sb.append("\nbytes allocated per operation in the benchmark's JVM (JMH gc profiler, gc.alloc.rate.norm)\n");
            for (Map.Entry<String, Map<String, Row>> e : byKey.entrySet()) {
                sb.append(String.format(Locale.ROOT, "%-52s", e.getKey()));
                for (String l : labels) {
                    Row r = e.getValue().get(l);
                    sb.append(String.format(Locale.ROOT, " %26s", r == null || Double.isNaN(r.allocPerOp) ? "-"
                            : String.format(Locale.ROOT, "%.1f", r.allocPerOp)));
                }
                sb.append('\n');
            }
        }
        return sb.toString();
    }

    private double elapsed() {
        return (System.nanoTime() - started) / 1e9;
    }
}
