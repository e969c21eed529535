package io.rdmanio.examples.scripts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.examples.agent.AgentJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launch scripts of examples/bin, run as a user runs them, with the jars this build made. */
class LaunchScriptsTest {

    @TempDir
    Path dir;

    private String run(String script, String... args) throws Exception {
        Path agent = AgentJvm.agentJar();
        Path root = agent.getParent().getParent().getParent();
        Path file = root.resolve("examples").resolve("bin").resolve(script);
        Assumptions.assumeTrue(Files.isDirectory(root.resolve("examples/target/lib")),
                "needs examples/target/lib: built by 'mvn -B package'");
        Path out = dir.resolve(script + ".out");
        ProcessBuilder pb = new ProcessBuilder(command(file, args)).directory(root.toFile())
                .redirectErrorStream(true).redirectOutput(out.toFile());
        // The scripts use the java on PATH: make it this test's.
        pb.environment().put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":" + System.getenv("PATH"));
        // shm-vs-tcp.sh: a warm-up of one second for the round trips, not the measurement's four.
        pb.environment().put("RTT_WARMUP", "1");
        Process p = pb.start();
        if (!p.waitFor(240, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            fail(script + " did not finish in 240 s:\n" + Files.readString(out));
        }
        String output = Files.readString(out);
        assertEquals(0, p.exitValue(), output);
        return output;
    }

    private static List<String> command(Path script, String... args) {
        List<String> command = new ArrayList<>(List.of("bash", script.toString()));
        command.addAll(List.of(args));
        return command;
    }

    @Test
    void blockingPairsMeasureThreadsThatBlockOnBothTransports() throws Exception {
        String out = run("blocking-pairs.sh", "1", "2");
        // Every echo was read back whole, or the client would have exited 1 and the script with it.
        assertTrue(out.contains("the last shm client: fabric 1, TCP 0"), out);
        assertEquals(2, pairRows(out, "(?m)^ +(\\d+) +([0-9.]+) +([0-9.]+) +([0-9.]+)x +([0-9.]+) +([0-9.]+)x$", 6),
                out);
        Matcher spread = Pattern.compile("min / median / max: ([0-9.]+) / ([0-9.]+) / ([0-9.]+)x; with spin 0: "
                + "([0-9.]+) / ([0-9.]+) / ([0-9.]+)x").matcher(out);
        assertTrue(spread.find(), out);
        assertSpread(spread, 1, out);
        assertSpread(spread, 4, out);
    }

    /**
     * The rows {@code regex} finds in {@code out}: each numbered in order (group 1), each of groups 2 to
     * {@code lastGroup} a positive number.
     */
    private static int pairRows(String out, String regex, int lastGroup) {
        Matcher pair = Pattern.compile(regex).matcher(out);
        int pairs = 0;
        while (pair.find()) {
            pairs++;
            assertEquals(String.valueOf(pairs), pair.group(1), out);
            for (int g = 2; g <= lastGroup; g++) {
                assertTrue(Double.parseDouble(pair.group(g)) > 0, out);
            }
        }
        return pairs;
    }

    /** Groups {@code first} to {@code first + 2} of {@code m} are a min, median and max: positive and in order. */
    private static void assertSpread(Matcher m, int first, String out) {
        double min = Double.parseDouble(m.group(first));
        double median = Double.parseDouble(m.group(first + 1));
        double max = Double.parseDouble(m.group(first + 2));
        assertTrue(0 < min && min <= median && median <= max, out);
    }

    @Test
    void shmVersusTcpMeasuresRepeatedPairsAndCarriesTheShmRunsOnShm() throws Exception {
        String out = run("shm-vs-tcp.sh", "0.3", "2");
        // Every echo was checked byte for byte and every streamed byte counted by the server, or the client
        // would have exited 1 and the script with it.
        assertTrue(out.contains("client: fabric 3, TCP 0; server: fabric 3, TCP 0"), out);
        assertEquals(2, pairRows(out, "(?m)^ +(\\d+) +([0-9.]+) us +([0-9.]+) us +([0-9.]+)x +(\\d+) MB/s +(\\d+) MB/s"
                + " +([0-9.]+)x +(\\d+) MB/s +(\\d+)%$", 9), out);
        assertTrue(out.contains("spread over the 2 pairs: min / median / max"), out);
        Matcher spread = Pattern.compile("shm/TCP +([0-9.]+) / ([0-9.]+) / ([0-9.]+)x").matcher(out);
        int spreads = 0;
        while (spread.find()) {
            spreads++;
            assertSpread(spread, 1, out);
        }
        assertEquals(4, spreads, out);
        // The connection's first second, reported on its own beside the warmed-up round trips.
        assertTrue(Pattern.compile("(?m)^ +first second, median, shm +[0-9.]+ / [0-9.]+ / [0-9.]+ us$").matcher(out)
            .find(), out);
        // The ring-copy limit, measured after each pair, and the stream held to it.
        assertTrue(Pattern.compile("(?m)^ +ring-copy limit +\\d+ / \\d+ / \\d+ MB/s$").matcher(out).find(), out);
        assertTrue(Pattern.compile("(?m)^ +shm stream / limit +([0-9.]+ / [0-9.]+ / [0-9.]+|none)$").matcher(out)
            .find(), out);
    }

    @Test
    void jettyDemoShowsFabricAndTcpConnections() throws Exception {
        String out = run("jetty-demo.sh");
        assertTrue(out.contains("all fetches exact"), out);
        Matcher client = Pattern.compile("client with the agent: fabric (\\d+), TCP (\\d+)").matcher(out);
        Matcher server = Pattern.compile("Jetty server: +fabric (\\d+), TCP (\\d+)").matcher(out);
        assertTrue(client.find() && server.find(), out);
        assertTrue(Integer.parseInt(client.group(1)) >= 1, out);
        assertEquals("0", client.group(2), out);
        assertEquals(client.group(1), server.group(1), out);
        assertTrue(Integer.parseInt(server.group(2)) >= 1, out);
    }

    @Test
    void nettyEchoRunsOnTheFabric() throws Exception {
        String out = run("netty-echo.sh");
        assertTrue(out.contains("all netty echoes intact"), out);
        assertTrue(out.contains("connections: fabric 8, TCP 0"), out);
    }
}
