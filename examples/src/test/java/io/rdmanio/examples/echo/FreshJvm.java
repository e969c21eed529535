package io.rdmanio.examples.echo;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * Starts an example in a new JVM with rdmanio's property activation, as a user would: the provider property, the
 * export of sun.nio.ch, and the agent jar on the class path. Output goes to files, so a chatty child never blocks
 * on a full pipe.
 */
final class FreshJvm {

    static final String PROVIDER = "io.rdmanio.selector.RdmaSelectorProvider";
    private static final long TIMEOUT_SECONDS = 180;

    /** What the child did. */
    record Outcome(int exitCode, String stdout, String stderr) {
        String describe() {
            return "exit " + exitCode + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr;
        }
    }

    private FreshJvm() {
    }

    /** The agent jar the selector module's package phase builds; the test is skipped, with the reason, without it. */
    static Path agentJar() {
        String root = System.getProperty("rdmanio.root");
        Path jar = root == null ? Path.of("..", "selector", "target", "rdmanio-agent.jar")
                : Path.of(root, "selector", "target", "rdmanio-agent.jar");
        Assumptions.assumeTrue(Files.isRegularFile(jar),
                "needs " + jar + ": build it with 'mvn -B package' (./rdmanio test does)");
        return jar.toAbsolutePath();
    }

    /** Runs {@code mainClass} with rdmanio activated by property, and the given {@code rdmanio.*} properties. */
    static Outcome run(Path workDir, Map<String, String> properties, Class<?> mainClass, String... args)
            throws IOException, InterruptedException {
        Started started = start(workDir, "", properties, mainClass, args);
        if (!started.process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            started.process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            fail("the example did not finish within " + TIMEOUT_SECONDS + " s: " + started.command
                    + "\n" + started.outcome().describe());
        }
        return started.outcome();
    }

    /** A child JVM still running; its output goes to {@code NAMEstdout.txt} and {@code NAMEstderr.txt}. */
    record Started(Process process, String command, Path out, Path err) {
        Outcome outcome() throws IOException {
            return new Outcome(process.isAlive() ? -1 : process.exitValue(), Files.readString(out),
                    Files.readString(err));
        }

        /** Waits until the child's stdout has a line containing {@code text}; fails after the timeout. */
        String awaitOutput(String text) throws IOException, InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
            while (System.nanoTime() - deadline < 0) {
                for (String line : Files.readAllLines(out)) {
                    if (line.contains(text)) {
                        return line;
                    }
                }
                if (!process.isAlive()) {
                    fail("the child exited before printing '" + text + "': " + outcome().describe());
                }
                process.waitFor(20, TimeUnit.MILLISECONDS);
            }
            fail("the child did not print '" + text + "' within " + TIMEOUT_SECONDS + " s: " + outcome().describe());
            return null;
        }

        /** Stops the child as a user's Ctrl-C would (its shutdown hooks run) and waits for it. */
        Outcome stop() throws IOException, InterruptedException {
            process.destroy();
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                fail("the child did not stop within " + TIMEOUT_SECONDS + " s: " + outcome().describe());
            }
            return outcome();
        }
    }

    /** Starts {@code mainClass} with rdmanio activated by property; {@code name} prefixes its output files. */
    static Started start(Path workDir, String name, Map<String, String> properties, Class<?> mainClass,
                         String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Djava.nio.channels.spi.SelectorProvider=" + PROVIDER);
        command.add("--add-exports");
        command.add("java.base/sun.nio.ch=ALL-UNNAMED");
        command.add("-Xmx512m");
        properties.forEach((k, v) -> command.add("-D" + k + "=" + v));
        command.add("-cp");
        command.add(agentJar() + File.pathSeparator + classesOf(mainClass));
        command.add(mainClass.getName());
        command.addAll(List.of(args));
        Path out = workDir.resolve(name + "stdout.txt");
        Path err = workDir.resolve(name + "stderr.txt");
        Process process = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        return new Started(process, String.join(" ", command), out, err);
    }

    private static String classesOf(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One counter of the stats file, such as {@code connections.rdma}. */
    static long stat(Path statsFile, String section, String transport) throws IOException {
        assertTrue(Files.isRegularFile(statsFile), "no stats file " + statsFile);
        String json = Files.readString(statsFile);
        Matcher m = Pattern.compile("\"" + section + "\": \\{\\s*\"rdma\": (\\d+),\\s*\"tcp\": (\\d+)").matcher(json);
        assertTrue(m.find(), "no " + section + " in " + json);
        return Long.parseLong(m.group(transport.equals("rdma") ? 1 : 2));
    }
}
