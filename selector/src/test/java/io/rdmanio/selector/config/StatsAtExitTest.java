package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The stats file is written by the exit hook of a real JVM, once, however many times the configuration loads. */
class StatsAtExitTest {

    /** The child: loads the configuration twice (as two providers would), counts, and exits normally. */
    public static final class Child {
        public static void main(String[] args) {
            ConfigLoader.load();
            ConfigLoader.load();
            RunStats stats = RunStats.get();
            stats.connectionOpened(true);
            stats.connectionOpened(true);
            stats.connectionOpened(false);
            stats.bytes(true, 4096);
            stats.bytes(false, 10);
            stats.bytes(false, -1);
        }
    }

    @Test
    void summaryIsWrittenAtExit(@TempDir Path dir) throws Exception {
        Path rules = dir.resolve("exit.rules");
        Files.writeString(rules, "connect 127.0.0.1 *\n");
        Path stats = dir.resolve("stats.json");
        Path err = dir.resolve("stderr.txt");
        Process child = new ProcessBuilder(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"),
                "-Drdmanio.rules=" + rules, "-Drdmanio.fabric=loopback", "-Drdmanio.stats=" + stats,
                Child.class.getName()))
                .redirectErrorStream(true).redirectOutput(err.toFile()).start();
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child JVM did not exit");
        assertEquals(0, child.exitValue(), () -> read(err));
        String json = read(stats);
        // How often the child's spins found the processors crowded depends on the machine's load: any count.
        assertTrue(json.matches("(?s).*\n  \"crowdedSpins\": \\d+,\n.*"), json);
        assertEquals("{\n"
                + "  \"fabric\": \"loopback\",\n"
                + "  \"rules\": \"" + rules + "\",\n"
                + "  \"connections\": {\n    \"rdma\": 2,\n    \"tcp\": 1\n  },\n"
                + "  \"bytes\": {\n    \"rdma\": 4096,\n    \"tcp\": 10\n  },\n"
                + "  \"engines\": {},\n"
                + "  \"crowdedSpins\": N,\n"
                + "  \"routedApis\": {\n    \"nio\": \"routed\",\n"
                + "    \"javaNet\": \"not routed: the agent did not run\",\n"
                + "    \"asyncChannels\": \"not routed: the agent did not run\"\n  },\n"
                + "  \"routedByRule\": {},\n"
                + "  \"fallbacks\": {\n    \"count\": 0,\n    \"reasons\": {}\n  },\n"
                + "  \"creditStalls\": 0,\n"
                + "  \"receiverNotReady\": 0\n"
                + "}\n", json.replaceFirst("\"crowdedSpins\": \\d+", "\"crowdedSpins\": N"));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }
}
