package io.rdmanio.examples.hadoop;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * One side of the shuffle in a JVM of its own, started as a user would: {@code java [-javaagent:rdmanio-agent.jar=...]
 * @hadoop/java17.args -cp target/classes:target/lib/* MAIN ARGS}. Output goes to files, so a chatty child never
 * blocks on a full pipe.
 */
final class ShuffleJvm {

    private static final long TIMEOUT_SECONDS = 180;

    private final Process process;
    private final Path out;
    private final Path err;

    private ShuffleJvm(Process process, Path out, Path err) {
        this.process = process;
        this.out = out;
        this.err = err;
    }

    /** The module's directory: surefire runs the tests in it; else the reactor root's {@code hadoop}. */
    static Path moduleDir() {
        Path here = Path.of("").toAbsolutePath();
        String root = System.getProperty("rdmanio.root");
        return Files.isRegularFile(here.resolve("java17.args")) || root == null ? here : Path.of(root, "hadoop");
    }

    /** The agent jar the selector module's package phase builds; the test is skipped, with the reason, without it. */
    static Path agentJar() {
        Path jar = moduleDir().resolveSibling("selector").resolve("target").resolve("rdmanio-agent.jar");
        Assumptions.assumeTrue(Files.isRegularFile(jar),
                "needs " + jar + ": build it with 'mvn -B package' (./rdmanio test does)");
        return jar;
    }

    /** Starts {@code main} with {@code agentOptions} (null: no agent, the JDK's TCP). */
    static ShuffleJvm start(Path work, String name, String agentOptions, Class<?> main, String... args)
            throws IOException {
        Path module = moduleDir();
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (agentOptions != null) {
            command.add("-javaagent:" + agentJar() + "=" + agentOptions);
        }
        command.add("@" + module.resolve("java17.args"));
        command.add("-Xmx512m");
        command.add("-cp");
        command.add(module.resolve("target/classes") + ":" + module.resolve("target/lib") + "/*");
        command.add(main.getName());
        command.addAll(List.of(args));
        Path out = work.resolve(name + ".out");
        Path err = work.resolve(name + ".err");
        Process process = new ProcessBuilder(command).directory(work.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        return new ShuffleJvm(process, out, err);
    }

    String describe() throws IOException {
        return "\n--- stdout\n" + Files.readString(out) + "--- stderr\n" + Files.readString(err);
    }

    /** Waits until the child printed a line matching {@code regex}; returns its first group. */
    String awaitLine(String regex) throws IOException, InterruptedException {
        Pattern p = Pattern.compile(regex, Pattern.MULTILINE);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (System.nanoTime() < deadline) {
            Matcher m = p.matcher(Files.readString(out));
            if (m.find()) {
                return m.group(1);
            }
            if (!process.isAlive()) {
                fail("the child exited (" + process.exitValue() + ") before printing /" + regex + "/" + describe());
            }
            // Polling a file the child appends to: no event to wait on, so a short bounded pause.
            process.waitFor(50, TimeUnit.MILLISECONDS);
        }
        process.destroyForcibly();
        fail("the child did not print /" + regex + "/ within " + TIMEOUT_SECONDS + " s" + describe());
        return null;
    }

    /** Waits for the child to exit by itself; returns its standard output, failing unless it exited with 0. */
    String await() throws IOException, InterruptedException {
        if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            fail("the child did not finish within " + TIMEOUT_SECONDS + " s" + describe());
        }
        assertTrue(process.exitValue() == 0, "exit " + process.exitValue() + describe());
        return Files.readString(out);
    }

    /** Ends a child that runs until stopped ({@link MapSide}) with a TERM; its shutdown hooks write the stats file. */
    void stop() throws IOException, InterruptedException {
        process.destroy();
        if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            fail("the child did not stop within " + TIMEOUT_SECONDS + " s" + describe());
        }
    }

    void kill() throws InterruptedException {
        if (process.isAlive()) {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }
}
