package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.engine.Engine;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {

    /** No fabric is in this directory: every one is unavailable, and opening one fails. */
    private static final FabricDirectory NO_FABRICS = new FabricDirectory() {
        @Override
        public String unavailableReason(String fabricName) {
            return "the " + fabricName + " fabric is not in this build";
        }

        @Override
        public Engine engine(String fabricName) throws IOException {
            throw new IOException(unavailableReason(fabricName));
        }
    };

    @TempDir
    Path dir;

    private static RdmanioConfig load(Map<String, String> properties) {
        return ConfigLoader.load(properties::get, NO_FABRICS);
    }

    @Test
    void defaultsAreAutoNoRulesNoStats() {
        RdmanioConfig config = load(Map.of());
        assertEquals("auto", config.fabric());
        assertSame(Rules.NONE, config.router());
        assertNull(config.statsFile());
        assertSame(Route.NO_MATCH, config.router().forConnect(new InetSocketAddress("127.0.0.1", 80)));
    }

    @Test
    void readsRulesFabricAndStats() throws Exception {
        Path rules = dir.resolve("app.rules");
        Files.writeString(rules, "connect 127.0.0.1 *\n");
        Path stats = dir.resolve("stats.json");
        RdmanioConfig config = load(Map.of(ConfigLoader.RULES, rules.toString(), ConfigLoader.FABRIC, "loopback",
                ConfigLoader.STATS, stats.toString()));
        assertEquals("loopback", config.fabric());
        assertEquals(stats, config.statsFile());
        Route route = config.router().forConnect(new InetSocketAddress("127.0.0.1", 4000));
        assertEquals(Action.RDMA, route.action());
        assertEquals(rules + ":1: connect 127.0.0.1 *", route.rule());
        assertTrue(config.engines() instanceof FabricChoice);
    }

    @Test
    void everyFabricNameIsAccepted() {
        for (String name : new String[] {"auto", "disni", "shm", "loopback"}) {
            assertEquals(name, load(Map.of(ConfigLoader.FABRIC, name)).fabric());
        }
    }

    @Test
    void unknownFabricListsTheValidNames() {
        ConfigException e = assertThrows(ConfigException.class, () -> load(Map.of(ConfigLoader.FABRIC, "verbs")));
        assertEquals("-Drdmanio.fabric=verbs is not a fabric: expected one of auto, disni, shm, loopback",
                e.getMessage());
    }

    @Test
    void missingRulesFileNamesThePath() {
        Path missing = dir.resolve("nope.rules");
        ConfigException e = assertThrows(ConfigException.class,
                () -> load(Map.of(ConfigLoader.RULES, missing.toString())));
        assertEquals("rules file " + missing + " does not exist", e.getMessage());
    }

    @Test
    void unreadableRulesFileNamesThePath() throws Exception {
        Path locked = dir.resolve("locked.rules");
        Files.writeString(locked, "connect * *\n");
        assertTrue(locked.toFile().setReadable(false, false));
        // Root reads anything; the check is only meaningful for other users.
        if (Files.isReadable(locked)) {
            return;
        }
        ConfigException e = assertThrows(ConfigException.class,
                () -> load(Map.of(ConfigLoader.RULES, locked.toString())));
        assertEquals("rules file " + locked + " cannot be read: permission denied", e.getMessage());
    }

    @Test
    void rulesSyntaxErrorNamesFileLineAndReason() throws Exception {
        Path rules = dir.resolve("bad.rules");
        Files.writeString(rules, "# routes\nconnect 127.0.0.1 * quick\n");
        RulesException e = assertThrows(RulesException.class,
                () -> load(Map.of(ConfigLoader.RULES, rules.toString())));
        assertEquals(rules + ":2: unknown action 'quick': expected rdma, tcp, both or auto (connect 127.0.0.1 * quick)",
                e.getMessage());
    }

    @Test
    void emptyPropertyIsAnError() {
        ConfigException e = assertThrows(ConfigException.class, () -> load(Map.of(ConfigLoader.RULES, " ")));
        assertEquals("-Drdmanio.rules is empty: expected a file name", e.getMessage());
    }

    @Test
    void statsFileInAMissingDirectoryFailsAtStart() {
        Path stats = dir.resolve("no-such-dir").resolve("stats.json");
        ConfigException e = assertThrows(ConfigException.class,
                () -> load(Map.of(ConfigLoader.STATS, stats.toString())));
        assertEquals("stats file " + stats + " (rdmanio.stats): directory " + stats.getParent() + " does not exist",
                e.getMessage());
    }

    @Test
    void statsFileThatIsADirectoryFailsAtStart() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> load(Map.of(ConfigLoader.STATS, dir.toString())));
        assertEquals("stats file " + dir + " (rdmanio.stats) is a directory", e.getMessage());
    }

    @Test
    void loadFromSystemPropertiesReadsTheRealProperties() throws Exception {
        Map<String, String> saved = new HashMap<>();
        for (String key : new String[] {ConfigLoader.RULES, ConfigLoader.FABRIC, ConfigLoader.STATS}) {
            saved.put(key, System.getProperty(key));
        }
        try {
            System.setProperty(ConfigLoader.FABRIC, "loopback");
            System.clearProperty(ConfigLoader.RULES);
            System.clearProperty(ConfigLoader.STATS);
            RdmanioConfig config = ConfigLoader.load();
            assertEquals("loopback", config.fabric());
            System.setProperty(ConfigLoader.FABRIC, "tcp");
            ConfigException e = assertThrows(ConfigException.class, ConfigLoader::load);
            assertTrue(e.getMessage().startsWith("-Drdmanio.fabric=tcp is not a fabric"), e.getMessage());
        } finally {
            saved.forEach((k, v) -> {
                if (v == null) {
                    System.clearProperty(k);
                } else {
                    System.setProperty(k, v);
                }
            });
        }
    }

    @Test
    void engineSettingsAreCheckedAtStart() {
        assertEquals("loopback", load(Map.of(ConfigLoader.FABRIC, "loopback", "rdmanio.slotSize", "4096",
                "rdmanio.ringDepth", "8", "rdmanio.controlSlots", "4", "rdmanio.spinMicros", "0")).fabric());
        ConfigException e = assertThrows(ConfigException.class, () -> load(Map.of("rdmanio.slotSize", "1000")));
        assertEquals("-Drdmanio.slotSize=1000: slot size must be a power of two between 256 and 1073741824 bytes: 1000",
                e.getMessage());
        e = assertThrows(ConfigException.class, () -> load(Map.of("rdmanio.ringDepth", "0")));
        assertEquals("-Drdmanio.ringDepth=0: rdmanio.ringDepth must be between 1 and 65536: 0", e.getMessage());
        e = assertThrows(ConfigException.class, () -> load(Map.of("rdmanio.controlSlots", "1")));
        assertTrue(e.getMessage().startsWith("-Drdmanio.controlSlots=1: "), e.getMessage());
        e = assertThrows(ConfigException.class, () -> load(Map.of("rdmanio.spinMicros", "fast")));
        assertEquals("-Drdmanio.spinMicros=fast is not a whole number", e.getMessage());
        e = assertThrows(ConfigException.class, () -> load(Map.of("rdmanio.spinMicros", "4294967296")));
        assertEquals("-Drdmanio.spinMicros=4294967296: out of range", e.getMessage());
        assertEquals("loopback", load(Map.of(ConfigLoader.FABRIC, "loopback", "rdmanio.lingerMillis", "0",
                "rdmanio.lingerMaxBytes", "4294967296")).fabric());
        e = assertThrows(ConfigException.class, () -> load(Map.of("rdmanio.lingerMillis", "-1")));
        assertEquals("-Drdmanio.lingerMillis=-1: rdmanio.lingerMillis must not be negative: -1", e.getMessage());
        e = assertThrows(ConfigException.class, () -> load(Map.of("rdmanio.lingerMaxBytes", "lots")));
        assertEquals("-Drdmanio.lingerMaxBytes=lots is not a whole number", e.getMessage());
    }

    @Test
    void aNamedFabricThatCannotOpenIsSaidAtStartOnlyWhenRulesRouteToIt() throws Exception {
        Path rules = dir.resolve("r.rules");
        Files.writeString(rules, "connect 127.0.0.1 *\n");
        String warning = ConfigLoader.unusableFabric(load(Map.of("rdmanio.fabric", "shm",
            "rdmanio.rules", rules.toString())), NO_FABRICS);
        assertEquals("-Drdmanio.fabric=shm cannot open on this machine: the shm fabric is not in this build."
            + " Connections the rules route to it will fail (those under 'both' rules go over TCP). Use"
            + " -Drdmanio.fabric=auto, or fix the cause; `./rdmanio doctor` checks the configuration.", warning);
        assertNull(ConfigLoader.unusableFabric(load(Map.of("rdmanio.fabric", "shm")), NO_FABRICS),
            "no rules: nothing is routed");
        assertNull(ConfigLoader.unusableFabric(load(Map.of("rdmanio.rules", rules.toString())), NO_FABRICS),
            "auto says it per connection");
    }
}
