package io.rdmanio.core.fabric.shm;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A second JVM running {@link ShmPeerMain}, its stdout read line by line. */
final class PeerProcess implements AutoCloseable {

    private final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> seen = Collections.synchronizedList(new ArrayList<>());

    private PeerProcess(List<String> command) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        process = builder.start();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    seen.add(line);
                    lines.add(line);
                }
            } catch (IOException e) {
                // process gone
            }
        }, "peer-output");
        reader.setDaemon(true);
        reader.start();
    }

    static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** Starts the peer with this JVM's class path. */
    static PeerProcess start(String... args) throws IOException {
        return startAs(List.of(), System.getProperty("java.class.path"), args);
    }

    /** Starts the peer with this JVM's class path and {@code -Drdmanio.shm.sealed=false}: plain shared files. */
    static PeerProcess startUnsealed(String... args) throws IOException {
        return startAs(List.of(), List.of("-D" + ShmNatives.SEALED_PROPERTY + "=false"),
            System.getProperty("java.class.path"), args);
    }

    /** Starts the peer behind {@code prefix} (e.g. a command changing the user) with {@code classPath}. */
    static PeerProcess startAs(List<String> prefix, String classPath, String... args) throws IOException {
        return startAs(prefix, List.of(), classPath, args);
    }

    private static PeerProcess startAs(List<String> prefix, List<String> jvmArgs, String classPath, String... args)
            throws IOException {
        List<String> command = new ArrayList<>(prefix);
        command.add(java());
        command.addAll(jvmArgs);
        command.add("-Xshare:auto");
        command.add("-cp");
        command.add(classPath);
        command.add(ShmPeerMain.class.getName());
        command.addAll(List.of(args));
        return new PeerProcess(command);
    }

    /** The next line starting with {@code prefix} (other lines are skipped), within the timeout. */
    String expect(String prefix) throws InterruptedException {
        long deadline = System.nanoTime() + ShmTestSupport.TIMEOUT_NANOS;
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
            if (line == null) {
                fail("the peer printed no line starting with '" + prefix + "'; it printed: " + seen
                    + (process.isAlive() ? "" : " and exited with " + process.exitValue()));
            }
            if (line.startsWith(prefix)) {
                return line;
            }
        }
    }

    /** Everything the peer printed so far, and how it exited if it did (for failure messages). */
    String output() {
        return seen + (process.isAlive() ? "" : " (exited with " + process.exitValue() + ")");
    }

    /** Writes {@code line} to the peer's standard input. */
    void send(String line) throws IOException {
        process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
        process.getOutputStream().flush();
    }

    long pid() {
        return process.pid();
    }

    /** SIGKILL, and wait until the kernel has reaped it. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(20, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        kill();
    }
}
