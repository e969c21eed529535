package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdmanio.core.engine.EngineStats;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JsonWriterTest {

    @Test
    void nestedObjectsNumbersAndNull() {
        String json = new JsonWriter().beginObject()
                .member("a", 1L)
                .beginObject("b").member("c", -2L).member("d", true).endObject()
                .beginObject("e").endObject()
                .member("f", (String) null)
                .endObject().finish();
        assertEquals("{\n  \"a\": 1,\n  \"b\": {\n    \"c\": -2,\n    \"d\": true\n  },\n  \"e\": {},\n"
                + "  \"f\": null\n}\n", json);
    }

    @Test
    void emptyObject() {
        assertEquals("{}\n", new JsonWriter().beginObject().endObject().finish());
    }

    @Test
    void stringsAreEscaped() {
        String json = new JsonWriter().beginObject()
                .member("q\"b\\", "tab\tnl\ncr\rbs\bff\f\u0001\u001f\u2028 é ok")
                .endObject().finish();
        assertEquals("{\n  \"q\\\"b\\\\\": \"tab\\tnl\\ncr\\rbs\\bff\\f\\u0001\\u001f\\u2028 é ok\"\n}\n", json);
    }

    @Test
    void misuseIsAnError() {
        assertThrows(IllegalStateException.class, () -> new JsonWriter().member("x", 1L));
        assertThrows(IllegalStateException.class, () -> new JsonWriter().endObject());
        assertThrows(IllegalStateException.class, () -> new JsonWriter().beginObject().finish());
    }

    @Test
    void summaryHasTheDocumentedShape() {
        RunStats stats = RunStats.get();
        long rdma = stats.fabricConnections();
        long tcp = stats.tcpConnections();
        long rdmaBytes = stats.fabricBytes();
        long tcpBytes = stats.tcpBytes();
        EngineStats engine = new EngineStats(2, 0, 100, 100, 9, 3, 1, 0, 0, 4);
        String json = StatsFile.toJson("loopback", "/tmp/x \"y\".rules", stats, Map.of("loopback", engine));
        assertEquals("{\n"
                + "  \"fabric\": \"loopback\",\n"
                + "  \"rules\": \"/tmp/x \\\"y\\\".rules\",\n"
                + "  \"connections\": {\n    \"rdma\": " + rdma + ",\n    \"tcp\": " + tcp + "\n  },\n"
                + "  \"bytes\": {\n    \"rdma\": " + rdmaBytes + ",\n    \"tcp\": " + tcpBytes + "\n  },\n"
                + "  \"engines\": {\n"
                + "    \"loopback\": {\n"
                + "      \"connectionsOpened\": 2,\n      \"connectionsFailed\": 0,\n"
                + "      \"bytesSent\": 100,\n      \"bytesReceived\": 100,\n"
                + "      \"frames\": 9,\n      \"creditFrames\": 3,\n      \"inlineFrames\": 4,\n      \"creditStalls\": 1,\n"
                + "      \"receiverNotReady\": 0,\n      \"protocolErrors\": 0\n"
                + "    }\n"
                + "  },\n"
                + "  \"crowdedSpins\": N\n"
                + "}\n", anyCrowdedSpins(json));
    }

    @Test
    void summaryWithoutRulesOrEngines() {
        String json = StatsFile.toJson("auto", null, RunStats.get(), Map.of());
        assertEquals(true, json.contains("\"rules\": null,\n"));
        assertEquals(true, anyCrowdedSpins(json).endsWith("  \"engines\": {},\n  \"crowdedSpins\": N\n}\n"), json);
    }

    /** The crowded-spin count is this JVM's so far (another test's spins may add to it): any count. */
    private static String anyCrowdedSpins(String json) {
        return json.replaceFirst("\"crowdedSpins\": \\d+", "\"crowdedSpins\": N");
    }

    @Test
    void writeReplacesTheFileWhole(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("stats.json");
        Files.writeString(file, "old content that is longer than the new one");
        StatsFile.write(file, "{}\n");
        assertEquals("{}\n", Files.readString(file));
        try (var listing = Files.list(dir)) {
            assertEquals(1, listing.count(), "no temporary file is left behind");
        }
    }
}
