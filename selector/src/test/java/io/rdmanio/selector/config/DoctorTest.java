package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.engine.Engine;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DoctorTest {

    private static final FabricDirectory ONLY_LOOPBACK = new FabricDirectory() {
        @Override
        public String unavailableReason(String fabricName) {
            return fabricName.equals("loopback") ? null : "the " + fabricName + " fabric is not in this build";
        }

        @Override
        public Engine engine(String fabricName) throws IOException {
            throw new IOException("not opened in this test");
        }
    };

    private static String run(Map<String, String> properties, int expectedExit) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int exit = Doctor.run(properties::get, ONLY_LOOPBACK, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(expectedExit, exit, out);
        return out;
    }

    @Test
    void reportsFabricsAndAValidConfiguration(@TempDir Path dir) throws Exception {
        Path rules = dir.resolve("ok.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        String out = run(Map.of("rdmanio.rules", rules.toString(), "rdmanio.fabric", "loopback"), 0);
        assertTrue(out.contains("fabric loopback: available\n"), out);
        assertTrue(out.contains("fabric shm: unavailable: the shm fabric is not in this build\n"), out);
        assertTrue(out.contains("rdmanio.fabric=auto would use: nothing"), out);
        assertTrue(out.contains("rdmanio.rules=" + rules + ": 2 rules, no errors\n"), out);
    }

    @Test
    void reportsTheErrorWithFileAndLine(@TempDir Path dir) throws Exception {
        Path rules = dir.resolve("bad.rules");
        Files.writeString(rules, "connect * 70000\n");
        String out = run(Map.of("rdmanio.rules", rules.toString()), 1);
        assertTrue(out.contains("configuration: ERROR " + rules + ":1: port 70000 out of range 0..65535"), out);
    }
}
