package io.rdmanio.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Thread-per-connection clients side by side on the JDK's TCP and on shm: T threads (virtual, or platform with
 * {@code --platform}), each with its own blocking connection to an echo server process, each doing R round trips
 * of 64 bytes, twice over the same connections; the time from the first round trip to the last of each pass, in
 * pairs (TCP, then shm, in turn), as min / median / max over the pairs, with the ratio of each pair. The first
 * pass runs while the JIT still compiles the code it uses (more of it on shm), the second once it is warm.
 * Virtual threads need JDK 21 or later.
 *
 * <pre>VirtualThreadsBench [--pairs N] [--threads T] [--rounds R] [--platform]</pre>
 */
public final class VirtualThreadsBench {

    private VirtualThreadsBench() {
    }

    public static void main(String[] args) throws Exception {
        int pairs = 5;
        int threads = 200;
        int rounds = 100;
        boolean platform = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--pairs": pairs = Integer.parseInt(args[++i]); break;
                case "--threads": threads = Integer.parseInt(args[++i]); break;
                case "--rounds": rounds = Integer.parseInt(args[++i]); break;
                case "--platform": platform = true; break;
                default: throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (!platform && Runtime.version().feature() < 21) {
            throw new IllegalStateException("virtual threads need JDK 21 or later (this is "
                    + Runtime.version() + "); bench.sh picks one under /usr/lib/jvm");
        }
        Path dir = Files.createTempDirectory("rdmanio-vthreads-");
        Path rules = Transport.writeRules(dir);
        String kind = platform ? "platform" : "virtual";
        System.out.printf("%d %s threads x %d round trips of 64 B, each thread its own blocking connection"
                + " (JDK %d; %d pairs)%n", threads, kind, rounds, Runtime.version().feature(), pairs);
        Transport[] transports = {Transport.TCP, Transport.SHM};
        // [pass][transport][pair]: pass 0 the first round trips of fresh JVMs, pass 1 the same again once warm.
        long[][][] ms = new long[2][transports.length][pairs];
        for (int p = 0; p < pairs; p++) {
            for (int t = 0; t < transports.length; t++) {
                long[] both = run(transports[t], rules, threads, rounds, kind);
                ms[0][t][p] = both[0];
                ms[1][t][p] = both[1];
            }
            System.out.printf("  pair %d: warm tcp %5d ms, shm %5d ms, shm/tcp %.2fx | first pass tcp %5d ms,"
                    + " shm %5d ms, shm/tcp %.2fx%n", p + 1, ms[1][0][p], ms[1][1][p],
                    (double) ms[1][1][p] / ms[1][0][p], ms[0][0][p], ms[0][1][p], (double) ms[0][1][p] / ms[0][0][p]);
        }
        System.out.println("  min / median / max over the pairs");
        String[] passes = {"first pass (fresh JVMs, code still compiling)", "warm (the same again)"};
        for (int pass = 1; pass >= 0; pass--) {
            System.out.println("  " + passes[pass]);
            double[][] values = new double[transports.length][];
            for (int t = 0; t < transports.length; t++) {
                values[t] = Arrays.stream(ms[pass][t]).asDoubleStream().toArray();
            }
            PairSpread.print(transports, values, "ms");
        }
    }

    /**
     * One run: a server process and a client process on {@code transport}; the client's ms for its first pass and
     * for its second (warm) pass over the same connections.
     */
    private static long[] run(Transport transport, Path rules, int threads, int rounds, String kind) throws Exception {
        try (ServerHandle server = ServerHandle.start(transport, 0, transport.jvmFlags(rules))) {
            List<String> cmd = new ArrayList<>(transport.javaCommand(rules, "-Xmx512m"));
            cmd.add(VirtualThreadsClient.class.getName());
            cmd.add(server.address().getAddress().getHostAddress());
            cmd.add(Integer.toString(server.address().getPort()));
            cmd.add(Integer.toString(threads));
            cmd.add(Integer.toString(rounds));
            cmd.add(kind);
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String elapsed = null;
            String cold = null;
            StringBuilder said = new StringBuilder();
            try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = out.readLine()) != null; ) {
                    said.append(line).append('\n');
                    if (line.startsWith("COLD ")) {
                        cold = line.substring(5).trim();
                    }
                    if (line.startsWith("ELAPSED ")) {
                        elapsed = line.substring(8).trim();
                    }
                }
            }
            if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0 || elapsed == null || cold == null) {
                p.destroyForcibly();
                throw new IOException("the " + transport.label() + " client failed: " + said);
            }
            return new long[] {Long.parseLong(cold), Long.parseLong(elapsed)};
        }
    }
}
