package io.rdmanio.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * What every benchmark shares: one fork, a fixed warmup and measurement, the transport parameter and its server,
 * and an HdrHistogram that the benchmarks record each operation's time into.
 *
 * <p>{@code transport} only names the transport; the JVM flags choose it ({@link Transport#jvmFlags}), and the
 * setup refuses to run when the two disagree. Run on the JDK's TCP without any flag, or through
 * {@link BenchMain}, which starts each transport's forks with its flags.
 */
@State(Scope.Thread)
@Fork(1)
@Warmup(iterations = 3, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
public abstract class BenchBase {
    /** Longest operation the histogram tracks: 10 s, in nanoseconds. */
    private static final long HDR_MAX = TimeUnit.SECONDS.toNanos(10);

    @Param({"tcp"})
    public String transport;

    protected ServerHandle server;
    protected final Histogram hdr = new Histogram(HDR_MAX, 3);
    private boolean measuring;

    /** SO_RCVBUF/SO_SNDBUF of the server's connections; 0 keeps the defaults. */
    protected int serverSocketBuffer() {
        return 0;
    }

    @Setup(Level.Trial)
    public void setupServer() throws IOException {
        Transport t = Transport.of(transport);
        Transport.ensureActive(t);
        server = ServerHandle.start(t, serverSocketBuffer(), List.of());
    }

    @Setup(Level.Iteration)
    public void setupIteration(IterationParams iteration) {
        measuring = iteration.getType() == IterationType.MEASUREMENT;
    }

    /** Records one operation's time, measurement iterations only. No allocation. */
    protected final void record(long startNanos) {
        if (measuring) {
            long t = System.nanoTime() - startNanos;
            hdr.recordValue(Math.min(t, HDR_MAX));
        }
    }

    @TearDown(Level.Trial)
    public void tearDownServer(BenchmarkParams params) throws IOException {
        try {
            reportHistogram(params);
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    private void reportHistogram(BenchmarkParams params) {
        if (hdr.getTotalCount() == 0) {
            return;
        }
        StringBuilder key = new StringBuilder(params.getBenchmark());
        StringBuilder json = new StringBuilder("{\"benchmark\": \"").append(params.getBenchmark()).append("\", \"params\": {");
        String sep = "";
        for (String p : params.getParamsKeys()) {
            key.append('-').append(params.getParam(p));
            json.append(sep).append('"').append(p).append("\": \"").append(params.getParam(p)).append('"');
            sep = ", ";
        }
        json.append(String.format(Locale.ROOT,
                "}, \"count\": %d, \"p50_us\": %.3f, \"p90_us\": %.3f, \"p99_us\": %.3f, \"p999_us\": %.3f, "
                        + "\"max_us\": %.3f, \"mean_us\": %.3f}",
                hdr.getTotalCount(), us(hdr.getValueAtPercentile(50)), us(hdr.getValueAtPercentile(90)),
                us(hdr.getValueAtPercentile(99)), us(hdr.getValueAtPercentile(99.9)), us(hdr.getMaxValue()),
                hdr.getMean() / 1000.0));
        System.out.println("hdr " + json);
        String dir = System.getProperty("bench.hdr.dir");
        if (dir != null) {
            try {
                Files.writeString(Path.of(dir, key.toString().replaceAll("[^A-Za-z0-9._-]", "_") + ".json"),
                        json.toString());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private static double us(long nanos) {
        return nanos / 1000.0;
    }
}
