package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.selector.RdmaSelectorProvider;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A process that opens connections until it has its most open files ({@code ulimit -n} 384): over TCP the connect
 * or accept that finds no descriptor fails "Too many open files" and nothing else changes. The same over shm: the
 * failing connect names the limit, every connection opened before still carries its bytes exact (a peer region
 * first used at the limit is mapped with the fabric's spare descriptors, not failed as a region nobody holds), the
 * fabric's watcher survives a logger that cannot open its files at the limit, and new connections open once some
 * are closed. {@link DescriptorLimitMain} is the program; it runs once per transport.
 */
@Timeout(value = 180)
class DescriptorLimitParityTest {

    private static final int LIMIT = 384;

    @TempDir
    static Path tmp;

    private static ShmNio shm;

    @BeforeAll
    static void start() throws IOException {
        shm = ShmNio.open();
    }

    @AfterAll
    static void stop() throws IOException {
        if (shm != null) {
            shm.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"tcp", "shm"})
    void connectionsOpenedUpToTheDescriptorLimitAllKeepWorking(String transport) throws Exception {
        List<String> java = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xshare:auto", "-XX:TieredStopAtLevel=1"));
        if (transport.equals("shm")) {
            java.addAll(List.of("--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
                "-Djava.nio.channels.spi.SelectorProvider=" + RdmaSelectorProvider.class.getName(),
                "-Drdmanio.rules=" + PeerJvm.rules(tmp), "-Drdmanio.fabric=shm", "-Drdmanio.shm.dir=" + shm.dir));
        }
        java.addAll(List.of("-cp", System.getProperty("java.class.path"), DescriptorLimitMain.class.getName()));
        List<String> cmd = new ArrayList<>(List.of("bash", "-c", "ulimit -n " + LIMIT + " && exec \"$@\"", "bash"));
        cmd.addAll(java);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out;
        try {
            out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the program ended");
        } finally {
            p.destroyForcibly();
        }
        System.out.println(transport + " under ulimit -n " + LIMIT + ":\n" + out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("\nDONE"), "the program ran to its end (nothing hung at the limit):\n" + out);
        String first = line(out, "FIRST-FAILURE ");
        assertTrue(first.contains("Too many open files") || first.contains("most open files"),
            "the first failure names the limit: " + first);
        assertTrue(Integer.parseInt(line(out, "PAIRS ")) >= 20, "pairs opened before the limit:\n" + out);
        assertEquals("0", line(out, "BROKEN "), "every pair opened before the limit carries its bytes:\n" + out);
        assertEquals("5", line(out, "NEW "), "new pairs open once some are closed:\n" + out);
        assertTrue(!out.contains("Exception in thread"), "no thread died:\n" + out);
    }

    private static String line(String out, String prefix) {
        for (String l : out.split("\n")) {
            if (l.startsWith(prefix)) {
                return l.substring(prefix.length()).trim();
            }
        }
        throw new AssertionError("no line " + prefix + "in:\n" + out);
    }
}
