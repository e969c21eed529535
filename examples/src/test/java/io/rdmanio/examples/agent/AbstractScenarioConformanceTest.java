package io.rdmanio.examples.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A scenario program written once (each scenario prints one line of what a program sees) and run five ways: on the
 * JDK alone, whose lines are the reference; through the agent with rules that route 127.0.0.1 over shm and over
 * loopback, and with {@code both} rules over shm (every connection on the fabric); and through the agent with rules
 * that route nothing the scenarios use (every connection the JDK's own, counted as TCP). Each run must print the
 * reference's lines exactly. Runs
 * on the JDK the build runs on (17, and 25 in {@code ./rdmanio test}), whose own behaviour is the reference.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractScenarioConformanceTest {

    /** One directory for the class's runs (the JDK's reference run is made once, before the tests). */
    Path dir;

    Path rules;
    String jdk;

    private final Class<?> scenarios;
    private final int connections;
    private final String[] expectedLines;

    /**
     * @param scenarios     the scenario program
     * @param connections   connections the scenarios open at least
     * @param expectedLines lines the JDK's own run must print: equal output must not mean equally broken
     */
    AbstractScenarioConformanceTest(Class<?> scenarios, int connections, String... expectedLines) {
        this.scenarios = scenarios;
        this.connections = connections;
        this.expectedLines = expectedLines;
    }

    @BeforeAll
    void runOnTheJdk(@TempDir Path tempDir) throws Exception {
        dir = tempDir;
        rules = dir.resolve("loopback-address.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        AgentJvm.Outcome plain = AgentJvm.run(dir, "-", scenarios);
        assertEquals(0, plain.exitCode(), plain::describe);
        jdk = plain.stdout();
        assertFalse(jdk.contains("FAILED"), jdk);
        for (String line : expectedLines) {
            assertTrue(jdk.contains(line + "\n"), () -> "the JDK's own run lacks '" + line + "':\n" + jdk);
        }
    }

    @Test
    void routedOverShmAsTheJdk() throws Exception {
        assumeShm();
        routedAsTheJdk("shm");
    }

    @Test
    void routedOverLoopbackAsTheJdk() throws Exception {
        routedAsTheJdk("loopback");
    }

    /**
     * Under {@code both} rules: servers listen on the fabric and on TCP at once, clients try the fabric first (a
     * refused connect then tries TCP): every connection still on the fabric, the same lines.
     */
    @Test
    void routedUnderBothRulesAsTheJdk() throws Exception {
        assumeShm();
        Path both = dir.resolve("both.rules");
        Files.writeString(both, "bind 127.0.0.1 * both\nconnect 127.0.0.1 * both\n");
        // Except "backlog": a server under both rules has two accept queues, the fabric's and the kernel's, and a
        // client whose fabric request a full backlog holds falls back to TCP (docs/compatibility.md, Backlog).
        routedAsTheJdk("shm", both, "backlog");
    }

    private void routedAsTheJdk(String fabric) throws Exception {
        routedAsTheJdk(fabric, rules);
    }

    /** Runs the scenarios (all but {@code except}) routed, and requires the JDK's lines for them. */
    private void routedAsTheJdk(String fabric, Path rulesFile, String... except) throws Exception {
        Path stats = dir.resolve(fabric + "-" + rulesFile.getFileName() + ".json");
        List<String> skip = List.of(except);
        List<String> lines = jdk.lines().filter(l -> !skip.contains(l.substring(0, Math.max(0, l.indexOf(':')))))
            .collect(Collectors.toList());
        String[] names = skip.isEmpty() ? new String[0]
            : lines.stream().map(l -> l.substring(0, l.indexOf(':'))).toArray(String[]::new);
        AgentJvm.Outcome routed = AgentJvm.run(dir, "rules=" + rulesFile + ",fabric=" + fabric + ",stats=" + stats,
            scenarios, names);
        assertEquals(0, routed.exitCode(), routed::describe);
        assertEquals(skip.isEmpty() ? jdk : String.join("\n", lines) + "\n", routed.stdout(), routed::describe);
        assertEquals(0, AgentJvm.stat(stats, "connections", "tcp"), () -> read(stats));
        assertTrue(AgentJvm.stat(stats, "connections", "rdma") >= connections, () -> read(stats));
        assertTrue(read(stats).contains("\"javaNet\": \"routed\"") && read(stats).contains("\"asyncChannels\": \"routed\""),
            () -> read(stats));
    }

    @Test
    void unroutedAreTheJdksOwn() throws Exception {
        Path elsewhere = dir.resolve("elsewhere.rules");
        Files.writeString(elsewhere, "connect 127.0.0.2 *\nbind 127.0.0.2 *\n");
        Path stats = dir.resolve("tcp.json");
        AgentJvm.Outcome run = AgentJvm.run(dir, "rules=" + elsewhere + ",stats=" + stats, scenarios);
        assertEquals(0, run.exitCode(), run::describe);
        assertEquals(jdk, run.stdout(), run::describe);
        assertEquals(0, AgentJvm.stat(stats, "connections", "rdma"), () -> read(stats));
        assertTrue(AgentJvm.stat(stats, "connections", "tcp") >= connections, () -> read(stats));
    }

    static void assumeShm() {
        assumeTrue(Files.isDirectory(Path.of("/dev/shm")) && Files.isWritable(Path.of("/dev/shm")),
            "needs a writable /dev/shm");
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }
}
