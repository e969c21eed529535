package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.selector.RdmaSelectorProvider;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A second JVM running an unmodified NIO main with rdmanio activated by system property: rules routing 127.0.0.1
 * to rdma, {@code fabric=shm} in a given directory, and optionally a stats file. Its stdout and stderr are read
 * line by line; its stdin takes commands.
 */
final class PeerJvm implements AutoCloseable {

    private final Process process;
    private final OutputStream stdin;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> seen = Collections.synchronizedList(new ArrayList<>());
    private final Thread reader;

    private PeerJvm(List<String> command) throws IOException {
        process = new ProcessBuilder(command).redirectErrorStream(true).start();
        stdin = process.getOutputStream();
        reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    seen.add(line);
                    lines.add(line);
                }
            } catch (IOException e) {
                // the process is gone
            }
        }, "peer-output-" + process.pid());
        reader.setDaemon(true);
        reader.start();
    }

    /** The rules file of every peer: 127.0.0.1 on a fabric for binds and connects alike. */
    static Path rules(Path dir) throws IOException {
        Path rules = dir.resolve("loopback-on-shm.rules");
        Files.writeString(rules, "bind 127.0.0.1 * rdma\nconnect 127.0.0.1 * rdma\n");
        return rules;
    }

    /**
     * Starts {@code main} with {@code args} in a fresh JVM on this JVM's class path.
     *
     * @param prefix   a command to run java under (e.g. one changing the user), or empty
     * @param classPath the class path of the new JVM
     * @param shmDir   {@code rdmanio.shm.dir}
     * @param rules    {@code rdmanio.rules}
     * @param stats    {@code rdmanio.stats}, or null
     */
    static PeerJvm start(List<String> prefix, String classPath, Path shmDir, Path rules, Path stats, Class<?> main,
        String... args) throws IOException {
        return start(Path.of(System.getProperty("java.home"), "bin", "java"), prefix, classPath, shmDir, rules, stats,
            main, args);
    }

    /** As {@link #start(List, String, Path, Path, Path, Class, String...)}, with the {@code java} executable. */
    static PeerJvm start(Path java, List<String> prefix, String classPath, Path shmDir, Path rules, Path stats,
        Class<?> main, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(java.toString());
        cmd.add("-Xshare:auto");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-Xmx256m");
        cmd.add("--add-exports");
        cmd.add("java.base/sun.nio.ch=ALL-UNNAMED");
        // As the agent exports it: rdmanio's exit hook then runs after the application's own.
        cmd.add("--add-exports");
        cmd.add("java.base/jdk.internal.access=ALL-UNNAMED");
        if (!java.equals(Path.of(System.getProperty("java.home"), "bin", "java"))) {
            // Another JDK (24+ for virtual threads) beside this one: sealed shared memory as this JVM has it, which
            // JDK 24 and later load only with native access enabled.
            cmd.add("--enable-native-access=ALL-UNNAMED");
        }
        cmd.add("-Djava.nio.channels.spi.SelectorProvider=" + RdmaSelectorProvider.class.getName());
        cmd.add("-Drdmanio.rules=" + rules);
        cmd.add("-Drdmanio.fabric=shm");
        cmd.add("-Drdmanio.shm.dir=" + shmDir);
        if (stats != null) {
            cmd.add("-Drdmanio.stats=" + stats);
        }
        cmd.add("-cp");
        cmd.add(classPath);
        cmd.add(main.getName());
        cmd.addAll(List.of(args));
        return new PeerJvm(cmd);
    }

    static PeerJvm start(Path shmDir, Path rules, Path stats, Class<?> main, String... args) throws IOException {
        return start(List.of(), System.getProperty("java.class.path"), shmDir, rules, stats, main, args);
    }

    /** A {@link NioPeerMain}, after it has said it runs on rdmanio's provider. */
    static PeerJvm peer(Path shmDir, Path rules) throws IOException, InterruptedException {
        PeerJvm p = start(shmDir, rules, null, NioPeerMain.class);
        assertEquals("PROVIDER " + RdmaSelectorProvider.class.getName(), p.expect("PROVIDER "));
        return p;
    }

    /**
     * A {@code java} executable of version 21 or later (virtual threads): this JVM's own, else the first one under
     * {@code /usr/lib/jvm}; null when there is none.
     */
    static Path javaWithVirtualThreads() {
        if (Runtime.version().feature() >= 21) {
            return Path.of(System.getProperty("java.home"), "bin", "java");
        }
        try (var homes = Files.list(Path.of("/usr/lib/jvm"))) {
            for (Path home : (Iterable<Path>) homes.sorted()::iterator) {
                Path release = home.resolve("release");
                Path java = home.resolve("bin").resolve("java");
                if (!Files.isRegularFile(release) || !Files.isExecutable(java)) {
                    continue;
                }
                for (String line : Files.readAllLines(release)) {
                    if (line.startsWith("JAVA_VERSION=")) {
                        String v = line.substring(13).replace("\"", "");
                        int dot = v.indexOf('.');
                        int feature = Integer.parseInt(dot < 0 ? v : v.substring(0, dot));
                        if (feature >= 21) {
                            return java;
                        }
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return null;
    }

    /** A {@link NioPeerMain} run by the {@code java} executable {@code java}, after it named its provider. */
    static PeerJvm peer(Path java, Path shmDir, Path rules) throws IOException, InterruptedException {
        PeerJvm p = start(java, List.of(), System.getProperty("java.class.path"), shmDir, rules, null,
            NioPeerMain.class);
        assertEquals("PROVIDER " + RdmaSelectorProvider.class.getName(), p.expect("PROVIDER "));
        return p;
    }

    /** SIGTERM (shutdown hooks run), and wait (bounded) for the exit. */
    void terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(ShmNio.TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            fail("a peer sent SIGTERM did not exit in time");
        }
    }

    /** Sends one command line. */
    void send(String command) throws IOException {
        stdin.write((command + "\n").getBytes(StandardCharsets.UTF_8));
        stdin.flush();
    }

    /** Sends {@code command} and returns the answer, the next line starting with {@code prefix}. */
    String ask(String command, String prefix) throws IOException, InterruptedException {
        send(command);
        return expect(prefix);
    }

    /** The next line starting with {@code prefix} (other lines are skipped; an ERROR line fails), bounded. */
    String expect(String prefix) throws InterruptedException {
        long deadline = System.nanoTime() + ShmNio.TIMEOUT_NANOS;
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
            if (line == null) {
                fail("the peer printed no line starting with '" + prefix + "' in time; it printed: " + output()
                    + (process.isAlive() ? "" : " and exited with " + process.exitValue()));
            }
            if (line.startsWith(prefix)) {
                return line;
            }
            if (line.startsWith("ERROR")) {
                fail("the peer failed while '" + prefix + "' was expected: " + output());
            }
        }
    }

    /** The next line starting with {@code prefix} if one arrives within {@code millis}, else null. */
    String poll(String prefix, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : lines.poll();
            if (line == null || line.startsWith(prefix)) {
                return line;
            }
            if (line.startsWith("ERROR")) {
                fail("the peer failed while '" + prefix + "' was expected: " + output());
            }
        }
    }

    /** Waits (bounded) for the process to exit; returns its exit code. */
    int awaitExit() throws InterruptedException {
        if (!process.waitFor(ShmNio.TIMEOUT_SECONDS * 6, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail("the peer did not exit in time; it printed: " + output());
        }
        reader.join(TimeUnit.SECONDS.toMillis(ShmNio.TIMEOUT_SECONDS));
        return process.exitValue();
    }

    String output() {
        synchronized (seen) {
            return String.join("\n", seen);
        }
    }

    /** The peer's thread dump, by jstack (for a failure message). */
    String threadDump() {
        try {
            Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jstack").toString(),
                Long.toString(process.pid())).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            p.waitFor(ShmNio.TIMEOUT_SECONDS, TimeUnit.SECONDS);
            return new String(out, StandardCharsets.UTF_8);
        } catch (IOException | InterruptedException e) {
            return "(no thread dump: " + e + ")";
        }
    }

    long pid() {
        return process.pid();
    }

    /** SIGKILL, and wait (bounded) until the kernel has reaped it. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(ShmNio.TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            fail("a killed peer did not exit in time");
        }
    }

    /** Closes stdin and waits for a normal exit; kills the process if it does not exit in time. */
    @Override
    public void close() throws InterruptedException {
        try {
            stdin.close();
        } catch (IOException e) {
            // already gone
        }
        if (!process.waitFor(ShmNio.TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(ShmNio.TIMEOUT_SECONDS, TimeUnit.SECONDS);
        }
    }
}
