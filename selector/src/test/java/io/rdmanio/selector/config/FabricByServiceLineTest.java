package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.FabricProvider;
import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.selector.ProviderSmokeMain;
import io.rdmanio.selector.RdmaSelectorProvider;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fabric is one provider class and one service line: a JVM whose class path carries a provider the project does
 * not ship can name it with {@code rdmanio.fabric}, and an unmodified NIO program's sockets are carried by it, with
 * nothing in the selector module knowing its name.
 */
class FabricByServiceLineTest {

    /** A fabric of its own name, standing on the loopback fabric: what a new fabric's provider looks like. */
    public static final class CopyProvider implements FabricProvider {
        static final String NAME = "loopback-copy";

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public String unavailableReason() {
            return null;
        }

        @Override
        public Fabric open(Map<String, String> settings) throws IOException {
            return Fabrics.provider("loopback").open(settings);
        }
    }

    @TempDir
    Path dir;

    @Test
    void aProviderOnTheClassPathIsAFabricByItsName() throws Exception {
        Path services = dir.resolve("extra/META-INF/services");
        Files.createDirectories(services);
        Files.writeString(services.resolve(FabricProvider.class.getName()), CopyProvider.class.getName() + "\n");
        Path rules = Files.writeString(dir.resolve("rules"), "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        Path stats = dir.resolve("stats.json");
        Path out = dir.resolve("child.txt");
        Process child = new ProcessBuilder(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
                "-Djava.nio.channels.spi.SelectorProvider=" + RdmaSelectorProvider.class.getName(),
                "-Drdmanio.fabric=" + CopyProvider.NAME, "-Drdmanio.rules=" + rules, "-Drdmanio.stats=" + stats,
                "-cp", dir.resolve("extra") + File.pathSeparator + System.getProperty("java.class.path"),
                ProviderSmokeMain.class.getName()))
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        assertTrue(child.waitFor(120, TimeUnit.SECONDS), "the child JVM did not exit");
        String output = Files.readString(out);
        assertEquals(0, child.exitValue(), output);
        assertTrue(output.contains("OK"), output);
        String json = Files.readString(stats);
        // One connection, counted at both ends, by the new fabric's engine.
        Pattern engine = Pattern.compile("\"" + CopyProvider.NAME + "\": \\{\\s*\"connectionsOpened\": 2,");
        assertTrue(engine.matcher(json).find(), json);
        assertTrue(Pattern.compile("\"tcp\": 0").matcher(json).find(), json);
    }
}
