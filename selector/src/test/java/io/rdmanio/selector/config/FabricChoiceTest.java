package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.EngineStats;
import io.rdmanio.core.engine.Listener;
import io.rdmanio.core.fabric.Notifier;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FabricChoiceTest {

    /** An engine that only has a name: the choice never calls more. */
    private static Engine named(String name) {
        return new Engine() {
            @Override
            public String fabricName() {
                return name;
            }

            @Override
            public Listener listen(InetSocketAddress local, int backlog, ConnectionOptions options) {
                throw new UnsupportedOperationException();
            }

            @Override
            public Connection connect(InetSocketAddress remote, ConnectionOptions options) {
                throw new UnsupportedOperationException();
            }

            @Override
            public int progress() {
                return 0;
            }

            @Override
            public boolean arm(Notifier notifier) {
                return true;
            }

            @Override
            public long spinNanos() {
                return 0;
            }

            @Override
            public EngineStats stats() {
                return new EngineStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
            }

            @Override
            public void close() {
            }
        };
    }

    /** Fabrics with the given availability: a null reason means it opens. */
    private static final class Directory implements FabricDirectory {
        final Map<String, String> reasons = new HashMap<>();
        final Map<String, Engine> engines = new HashMap<>();

        Directory(String... availableFabrics) {
            for (String name : new String[] {"disni", "shm", "loopback"}) {
                reasons.put(name, "the " + name + " fabric is not in this build");
            }
            for (String name : availableFabrics) {
                reasons.put(name, null);
                engines.put(name, named(name));
            }
        }

        @Override
        public String unavailableReason(String fabricName) {
            return reasons.get(fabricName);
        }

        @Override
        public Engine engine(String fabricName) throws IOException {
            Engine engine = engines.get(fabricName);
            if (engine == null) {
                throw new IOException(reasons.get(fabricName));
            }
            return engine;
        }
    }

    private static final InetSocketAddress LOCAL = new InetSocketAddress("127.0.0.1", 7000);
    // TEST-NET-3: documentation addresses, never assigned to an interface here.
    private static final InetSocketAddress REMOTE = new InetSocketAddress("203.0.113.7", 7000);

    @Test
    void fixedFabricOpensThatFabric() throws Exception {
        Directory d = new Directory("loopback");
        FabricChoice choice = new FabricChoice("loopback", d);
        assertSame(d.engines.get("loopback"), choice.engineFor(LOCAL, false));
        assertSame(d.engines.get("loopback"), choice.engineFor(REMOTE, true));
        assertSame(d.engines.get("loopback"), FabricChoice.usedEngines().get("loopback"));
    }

    @Test
    void fixedFabricThatCannotOpenSaysWhy() {
        FabricChoice choice = new FabricChoice("shm", new Directory("loopback"));
        IOException e = assertThrows(IOException.class, () -> choice.engineFor(LOCAL, false));
        assertEquals("rdmanio.fabric=shm: the shm fabric cannot carry a connection to " + LOCAL
                + ": the shm fabric is not in this build", e.getMessage());
    }

    @Test
    void autoPrefersDisni() throws Exception {
        Directory d = new Directory("disni", "shm");
        FabricChoice choice = new FabricChoice("auto", d);
        assertEquals("disni", choice.engineFor(REMOTE, false).fabricName());
        assertEquals("disni", choice.engineFor(LOCAL, false).fabricName());
        assertEquals("disni", choice.engineFor(LOCAL, true).fabricName());
    }

    @Test
    void autoTakesShmForAPeerOnThisHostOrAListener() throws Exception {
        FabricChoice choice = new FabricChoice("auto", new Directory("shm"));
        assertEquals("shm", choice.engineFor(LOCAL, false).fabricName());
        assertEquals("shm", choice.engineFor(new InetSocketAddress("::1", 7000), false).fabricName());
        assertEquals("shm", choice.engineFor(new InetSocketAddress("0.0.0.0", 7000), true).fabricName());
        IOException e = assertThrows(IOException.class, () -> choice.engineFor(REMOTE, false));
        assertEquals("rdmanio.fabric=auto: no fabric can carry a connection to " + REMOTE
                + " (disni: the disni fabric is not in this build; shm: the peer is not on this host);"
                + " route it to tcp in the rules file, or name a fabric with -Drdmanio.fabric", e.getMessage());
    }

    @Test
    void autoNeverTakesLoopback() {
        FabricChoice choice = new FabricChoice("auto", new Directory("loopback"));
        IOException e = assertThrows(IOException.class, () -> choice.engineFor(LOCAL, true));
        assertEquals("rdmanio.fabric=auto: no fabric can carry a listener on " + LOCAL
                + " (disni: the disni fabric is not in this build; shm: the shm fabric is not in this build);"
                + " route it to tcp in the rules file, or name a fabric with -Drdmanio.fabric", e.getMessage());
    }

    @Test
    void theBuildsOwnDirectoryFindsLoopbackAndNamesMissingFabrics() {
        assertNull(SystemFabrics.INSTANCE.unavailableReason("loopback"));
        assertEquals("the nosuch fabric is not in this build", SystemFabrics.INSTANCE.unavailableReason("nosuch"));
    }

    @Test
    void loopbackOpensTheSharedEngineOfTheEngineModule() throws Exception {
        FabricChoice choice = new FabricChoice("loopback", SystemFabrics.INSTANCE);
        Engine engine = choice.engineFor(LOCAL, true);
        assertEquals("loopback", engine.fabricName());
        assertSame(engine, choice.engineFor(REMOTE, false));
        assertSame(engine, io.rdmanio.core.engine.Engines.get("loopback"));
    }

    @Test
    void aFabricThatCannotOpenHereSaysWhy() {
        String reason = SystemFabrics.INSTANCE.unavailableReason("disni");
        assumeTrue(reason != null, "this machine has a usable RDMA device");
        FabricChoice choice = new FabricChoice("disni", SystemFabrics.INSTANCE);
        IOException e = assertThrows(IOException.class, () -> choice.engineFor(REMOTE, false));
        assertTrue(e.getMessage().startsWith("rdmanio.fabric=disni: the disni fabric cannot carry a connection to "
                + REMOTE + ": "), e.getMessage());
        assertTrue(e.getMessage().endsWith(reason), e.getMessage());
    }
}
