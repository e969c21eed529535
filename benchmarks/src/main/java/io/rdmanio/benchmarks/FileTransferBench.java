package io.rdmanio.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * A file sent with {@code FileChannel.transferTo} into a socket channel, TCP (where the JDK uses sendfile) beside shm
 * (where the JDK, which knows only its own channels, copies through an 8 KiB buffer): two processes per run, the
 * server sending the file to R connections in turn and the client reading each to its end; the MB/s of each run is
 * the median of its rounds after the first (a fresh JVM's first round compiles), and the pairs (TCP, then shm) are
 * reported as min / median / max with the ratio of each pair.
 *
 * <pre>FileTransferBench [--pairs N] [--mib M] [--rounds R]</pre>
 */
public final class FileTransferBench {

    private FileTransferBench() {
    }

    public static void main(String[] args) throws Exception {
        int pairs = 3;
        int mib = 256;
        int rounds = 5;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--pairs": pairs = Integer.parseInt(args[++i]); break;
                case "--mib": mib = Integer.parseInt(args[++i]); break;
                case "--rounds": rounds = Integer.parseInt(args[++i]); break;
                default: throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (rounds < 2) {
            throw new IllegalArgumentException("--rounds must be at least 2 (the first round is left out)");
        }
        Path dir = Files.createTempDirectory("rdmanio-file-");
        try {
            Path rules = Transport.writeRules(dir);
            Path file = dir.resolve("payload.bin");
            writeRandom(file, (long) mib << 20);
            System.out.printf("a %d MiB file sent with FileChannel.transferTo, %d rounds per run (the first left out);"
                    + " %d pairs%n", mib, rounds, pairs);
            Transport[] transports = {Transport.TCP, Transport.SHM};
            double[][] mbps = new double[transports.length][pairs];
            for (int p = 0; p < pairs; p++) {
                for (int t = 0; t < transports.length; t++) {
                    mbps[t][p] = run(transports[t], rules, file, rounds, (long) mib << 20);
                }
                System.out.printf("  pair %d: tcp %6.0f MB/s, shm %6.0f MB/s, shm/tcp %.2fx%n", p + 1, mbps[0][p],
                        mbps[1][p], mbps[1][p] / mbps[0][p]);
            }
            System.out.println("  min / median / max over the pairs");
            PairSpread.print(transports, mbps, "MB/s");
        } finally {
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.deleteIfExists(f);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    private static void writeRandom(Path file, long bytes) throws IOException {
        byte[] chunk = new byte[1 << 20];
        Random random = new Random(7);
        try (OutputStream out = Files.newOutputStream(file)) {
            for (long left = bytes; left > 0; left -= chunk.length) {
                random.nextBytes(chunk);
                out.write(chunk, 0, (int) Math.min(chunk.length, left));
            }
        }
    }

    /** One run: a server and a client process on {@code transport}; the median MB/s of the rounds after the first. */
    private static double run(Transport transport, Path rules, Path file, int rounds, long bytes) throws Exception {
        List<String> serve = new ArrayList<>(transport.javaCommand(rules, "-Xmx256m"));
        serve.addAll(List.of(FileTransferPeer.class.getName(), "serve", file.toString(), Integer.toString(rounds)));
        Process server = new ProcessBuilder(serve).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            BufferedReader sout = new BufferedReader(new InputStreamReader(server.getInputStream(),
                    StandardCharsets.UTF_8));
            String line = sout.readLine();
            for (int skipped = 0; line != null && !line.startsWith("PORT ") && skipped < 20; skipped++) {
                line = sout.readLine();
            }
            if (line == null || !line.startsWith("PORT ")) {
                throw new IOException("the " + transport.label() + " file server did not start (said: " + line + ")");
            }
            List<String> fetch = new ArrayList<>(transport.javaCommand(rules, "-Xmx256m"));
            fetch.addAll(List.of(FileTransferPeer.class.getName(), "fetch", line.substring(5).trim(),
                    Integer.toString(rounds), Long.toString(bytes)));
            Process client = new ProcessBuilder(fetch).redirectErrorStream(true).start();
            List<Double> rates = new ArrayList<>();
            StringBuilder said = new StringBuilder();
            try (BufferedReader out = new BufferedReader(new InputStreamReader(client.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String l; (l = out.readLine()) != null; ) {
                    said.append(l).append('\n');
                    if (l.startsWith("ROUND ")) {
                        rates.add(bytes / 1e6 / (Long.parseLong(l.substring(6).trim()) / 1e9));
                    }
                }
            }
            if (!client.waitFor(10, TimeUnit.MINUTES) || client.exitValue() != 0 || rates.size() != rounds) {
                client.destroyForcibly();
                throw new IOException("the " + transport.label() + " file client failed: " + said);
            }
            return PairSpread.median(rates.subList(1, rates.size()).stream().mapToDouble(Double::doubleValue)
                    .toArray());
        } finally {
            if (!server.waitFor(1, TimeUnit.MINUTES)) {
                server.destroyForcibly();
            }
        }
    }
}
