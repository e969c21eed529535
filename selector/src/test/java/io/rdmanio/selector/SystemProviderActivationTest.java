package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The provider installed JVM-wide by system property, in a forked JVM running an unmodified NIO program. */
class SystemProviderActivationTest {

    private static final String EXPORTS = "java.base/sun.nio.ch=ALL-UNNAMED";

    @TempDir
    Path dir;

    private record Run(int exit, String out, String err) {
    }

    private Run run(boolean withExports) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (withExports) {
            cmd.add("--add-exports");
            cmd.add(EXPORTS);
        }
        cmd.add("-Djava.nio.channels.spi.SelectorProvider=" + RdmaSelectorProvider.class.getName());
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ProviderSmokeMain.class.getName());
        File out = dir.resolve("out.txt").toFile();
        File err = dir.resolve("err.txt").toFile();
        Process p = new ProcessBuilder(cmd).redirectOutput(out).redirectError(err).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("the forked JVM did not finish in 120 s");
        }
        return new Run(p.exitValue(), Files.readString(out.toPath(), StandardCharsets.UTF_8),
                Files.readString(err.toPath(), StandardCharsets.UTF_8));
    }

    @Test
    void unmodifiedProgramRunsOnTheProvider() throws Exception {
        Run r = run(true);
        assertEquals(0, r.exit, r.out + r.err);
        assertTrue(r.out.contains("provider " + RdmaSelectorProvider.class.getName()), r.out);
        assertTrue(r.out.contains("channel " + RdmaSocketChannel.class.getName()), r.out);
        assertTrue(r.out.contains("OK"), r.out + r.err);
    }

    @Test
    void missingExportsFlagIsNamed() throws Exception {
        Run r = run(false);
        assertNotEquals(0, r.exit, r.out);
        assertTrue(r.err.contains("--add-exports " + EXPORTS), "the error names the missing flag: " + r.err);
    }
}
