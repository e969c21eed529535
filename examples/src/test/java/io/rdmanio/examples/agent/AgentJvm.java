package io.rdmanio.examples.agent;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * Starts an example in a new JVM exactly as a user would with the one-flag activation: {@code java
 * -javaagent:rdmanio-agent.jar=OPTIONS -cp APP MAIN}, and nothing else rdmanio-specific (no provider property, no
 * {@code --add-exports}). Output goes to files, so a chatty child never blocks on a full pipe.
 */
public final class AgentJvm {

    private static final long TIMEOUT_SECONDS = 180;

    /** What the child did. */
    public record Outcome(int exitCode, String stdout, String stderr) {
        public String describe() {
            return "exit " + exitCode + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr;
        }
    }

    /** A child that is running. */
    public static final class Child {
        private final Process process;
        private final Path out;
        private final Path err;
        private final List<String> command;

        Child(Process process, Path out, Path err, List<String> command) {
            this.process = process;
            this.out = out;
            this.err = err;
            this.command = command;
        }

        public Process process() {
            return process;
        }

        public String stdoutSoFar() throws IOException {
            return Files.readString(out);
        }

        /** Waits for the child to exit by itself, failing the test (and killing it) after the time limit. */
        public Outcome await() throws IOException, InterruptedException {
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                kill();
                fail("the example did not finish within " + TIMEOUT_SECONDS + " s: " + String.join(" ", command)
                        + "\n--- stdout\n" + Files.readString(out) + "--- stderr\n" + Files.readString(err));
            }
            return new Outcome(process.exitValue(), Files.readString(out), Files.readString(err));
        }

        /** Waits until the child printed a line matching {@code regex}; returns the first group. */
        public String awaitLine(String regex) throws IOException, InterruptedException {
            Pattern p = Pattern.compile(regex, Pattern.MULTILINE);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
            while (System.nanoTime() < deadline) {
                Matcher m = p.matcher(Files.readString(out));
                if (m.find()) {
                    return m.groupCount() > 0 ? m.group(1) : m.group();
                }
                if (!process.isAlive()) {
                    fail("the child exited (" + process.exitValue() + ") before printing /" + regex + "/\n--- stdout\n"
                            + Files.readString(out) + "--- stderr\n" + Files.readString(err));
                }
                // Polling a file the child appends to: no event to wait on, so a short bounded pause.
                process.waitFor(50, TimeUnit.MILLISECONDS);
            }
            kill();
            fail("the child did not print /" + regex + "/ within " + TIMEOUT_SECONDS + " s");
            return null;
        }

        /** Ends the child (a server that runs until stopped); its shutdown hooks write the stats file. */
        public Outcome stop() throws IOException, InterruptedException {
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                kill();
            }
            return new Outcome(process.exitValue(), Files.readString(out), Files.readString(err));
        }

        void kill() throws InterruptedException {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    private AgentJvm() {
    }

    /** The agent jar the selector module's package phase builds; the test is skipped, with the reason, without it. */
    public static Path agentJar() {
        String root = System.getProperty("rdmanio.root");
        Path jar = root == null ? Path.of("..", "selector", "target", "rdmanio-agent.jar")
                : Path.of(root, "selector", "target", "rdmanio-agent.jar");
        Assumptions.assumeTrue(Files.isRegularFile(jar),
                "needs " + jar + ": build it with 'mvn -B package' (./rdmanio test does)");
        return jar.toAbsolutePath();
    }

    /**
     * Starts {@code mainClass} from this module's class path, with the agent and {@code agentOptions} (null: the
     * agent without options; the literal {@code "-"}: no agent at all, a plain JDK run).
     */
    public static Child start(Path workDir, String name, String agentOptions, Class<?> mainClass, String... args)
            throws IOException {
        return start(workDir, name, agentOptions, appClassPath(mainClass), mainClass, args);
    }

    /**
     * As {@link #run}, with nothing on the class path but {@code mainClass}'s own directory or jar: no SLF4J, no
     * other library, as a bare program would have.
     */
    public static Outcome runAlone(Path workDir, String agentOptions, Class<?> mainClass, String... args)
            throws IOException, InterruptedException {
        return start(workDir, "child", agentOptions, locationOf(mainClass), mainClass, args).await();
    }

    private static Child start(Path workDir, String name, String agentOptions, String classPath, Class<?> mainClass,
                               String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (!"-".equals(agentOptions)) {
            command.add("-javaagent:" + agentJar() + (agentOptions == null ? "" : "=" + agentOptions));
        }
        command.add("-Xmx256m");
        command.add("-cp");
        command.add(classPath);
        command.add(mainClass.getName());
        command.addAll(List.of(args));
        Path out = workDir.resolve(name + ".out");
        Path err = workDir.resolve(name + ".err");
        Process process = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        return new Child(process, out, err, command);
    }

    public static Outcome run(Path workDir, String agentOptions, Class<?> mainClass, String... args)
            throws IOException, InterruptedException {
        return start(workDir, "child", agentOptions, mainClass, args).await();
    }

    /**
     * The example's classes and its third-party libraries (Netty, Jetty, SLF4J), but none of rdmanio's own
     * classes: those come from the agent jar alone, as for a user.
     */
    private static String appClassPath(Class<?> mainClass) {
        List<String> entries = new ArrayList<>();
        entries.add(locationOf(mainClass));
        List<String> rdmanio = List.of(locationOf(io.rdmanio.selector.RdmaSelectorProvider.class),
                locationOf(io.rdmanio.core.engine.Engine.class));
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = Path.of(e).getFileName().toString();
            if (rdmanio.contains(Path.of(e).toAbsolutePath().toString()) || name.startsWith("junit")
                    || name.startsWith("opentest4j") || name.startsWith("apiguardian") || name.equals("test-classes")
                    || name.startsWith("surefire") || entries.contains(e)) {
                continue;
            }
            entries.add(e);
        }
        return String.join(File.pathSeparator, entries);
    }

    private static String locationOf(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One counter of the stats file, such as {@code connections.rdma}. */
    public static long stat(Path statsFile, String section, String transport) throws IOException {
        assertTrue(Files.isRegularFile(statsFile), "no stats file " + statsFile);
        String json = Files.readString(statsFile);
        Matcher m = Pattern.compile("\"" + section + "\": \\{\\s*\"rdma\": (\\d+),\\s*\"tcp\": (\\d+)").matcher(json);
        assertTrue(m.find(), "no " + section + " in " + json);
        return Long.parseLong(m.group(transport.equals("rdma") ? 1 : 2));
    }
}
