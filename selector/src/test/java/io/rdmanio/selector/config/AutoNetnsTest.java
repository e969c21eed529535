package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.testsupport.Netns;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code connect * * auto} between unmodified NIO programs on three namespace hosts (10.231.0.1-3 on one bridge):
 * {@code sa} runs an rdmanio server (its listener registers and answers), {@code sc} a plain JDK server, and the
 * rdmanio client on {@code sb} reaches the first over a fabric and the second over TCP, the second time without
 * waiting. The hosts share one kernel and {@code /dev/shm}, so the fabric the resolver names is shm.
 */
class AutoNetnsTest {

    private static final String SA = Netns.address(0);
    private static final String SB = Netns.address(1);
    private static final String SC = Netns.address(2);
    private static final int PORT = 47311;
    private static final int RESOLVER_PORT = 17481;

    private final List<Netns.Node> nodes = new ArrayList<>();

    @BeforeAll
    static void buildHosts() throws Exception {
        String reason = Netns.unavailableReason();
        Assumptions.assumeTrue(reason == null, reason);
        String shm = SystemFabrics.INSTANCE.unavailableReason("shm");
        Assumptions.assumeTrue(shm == null, "the shm fabric is unavailable: " + shm);
        Netns.create("sa", "sb", "sc");
    }

    @AfterAll
    static void removeHosts() throws Exception {
        if (Netns.unavailableReason() == null) {
            Netns.destroy();
        }
    }

    @AfterEach
    void stop() throws Exception {
        for (Netns.Node n : nodes) {
            n.close();
        }
    }

    private Netns.Node rdmanio(String host, Path rules, Path stats, String... args) throws Exception {
        Netns.Node n = new Netns.Node(host, List.of(
            "-Djava.nio.channels.spi.SelectorProvider=io.rdmanio.selector.RdmaSelectorProvider",
            "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
            "-Drdmanio.rules=" + rules, "-Drdmanio.stats=" + stats,
            "-Drdmanio.resolver.port=" + RESOLVER_PORT, "-Drdmanio.resolver.timeoutMillis=300"),
            AutoPeer.class.getName(), args);
        nodes.add(n);
        return n;
    }

    @Test
    void autoTakesTheFabricToAnRdmanioPeerAndTcpToAnother(@TempDir Path dir) throws Exception {
        Path rules = dir.resolve("auto.rules");
        Files.writeString(rules, "bind * * auto\nconnect * * auto\n");
        // The temporary directory must be readable by the namespace JVMs: it is, they run as this user.
        Netns.Node server = rdmanio("sa", rules, dir.resolve("server.json"), "server", Integer.toString(PORT));
        Netns.Node plain = new Netns.Node("sc", List.of(), AutoPeer.class.getName(), "server", Integer.toString(PORT));
        nodes.add(plain);
        Netns.Node client = rdmanio("sb", rules, dir.resolve("client.json"), "client");

        String toRdmanio = client.call(SA + ":" + PORT, "CONNECTED");
        String toPlain = client.call(SC + ":" + PORT, "CONNECTED");
        String toPlainAgain = client.call(SC + ":" + PORT, "CONNECTED");
        System.out.println("netns auto: " + toRdmanio + "\nnetns auto: " + toPlain + "\nnetns auto: " + toPlainAgain);
        assertFalse(toRdmanio.contains("FAILED"), toRdmanio);
        assertTrue(toRdmanio.contains("shm"), "the rdmanio peer over the fabric: " + toRdmanio);
        assertFalse(toPlain.contains("FAILED") || toPlain.contains("shm"), "the plain peer over TCP: " + toPlain);
        assertFalse(toPlainAgain.contains("FAILED") || toPlainAgain.contains("shm"), toPlainAgain);
        String accepted = server.expect("ACCEPTED");
        assertTrue(accepted.contains("shm"), accepted);
        // From the client's own namespace's address, as over TCP (the host's /dev/shm is shared, the addresses
        // are not), on a port the server sees as the client shows it.
        Matcher from = Pattern.compile("local=/" + Pattern.quote(SB) + ":(\\d+) ").matcher(toRdmanio);
        assertTrue(from.find(), "connected from " + SB + ": " + toRdmanio);
        assertTrue(accepted.contains("remote=/" + SB + ":" + from.group(1)), "the server sees the client's address: "
            + accepted + " / " + toRdmanio);
        client.close();

        String json = Files.readString(dir.resolve("client.json"), StandardCharsets.UTF_8);
        assertEquals(1, counter(json, "connections", "rdma"), json);
        assertEquals(2, counter(json, "connections", "tcp"), json);
        assertEquals(1, counter(json, "resolver", "misses"), "one wait, for the first connect to the plain peer: "
            + json);
        assertEquals(1, counter(json, "resolver", "negativeHits"), "the second connect paid nothing: " + json);
        assertEquals(1, counter(json, "resolver", "answersAccepted"), json);
    }

    @Test
    void autoFindsThePeerThroughInterfacesWithoutABroadcastAddress(@TempDir Path dir) throws Exception {
        String[] hosts = {"sa", "sb", "sc"};
        try {
            for (int i = 0; i < hosts.length; i++) {
                Netns.readdress(hosts[i], i, false);
            }
            Path rules = dir.resolve("auto.rules");
            Files.writeString(rules, "bind * * auto\nconnect * * auto\n");
            rdmanio("sa", rules, dir.resolve("server.json"), "server", Integer.toString(PORT + 2));
            Netns.Node client = rdmanio("sb", rules, dir.resolve("client.json"), "client");
            String connected = client.call(SA + ":" + (PORT + 2), "CONNECTED");
            System.out.println("netns auto without broadcast addresses: " + connected);
            assertFalse(connected.contains("FAILED"), connected);
            assertTrue(connected.contains("shm"), "the peer was found through the directed broadcast of the prefix: "
                + connected);
        } finally {
            for (int i = 0; i < hosts.length; i++) {
                Netns.readdress(hosts[i], i, true);
            }
        }
    }

    @Test
    void overIpv6AutoFindsAnRdmanioServerFromItsOwnHostAndAnother(@TempDir Path dir) throws Exception {
        String[] hosts = {"sa", "sb", "sc"};
        try {
            for (int i = 0; i < hosts.length; i++) {
                Netns.addIpv6(hosts[i], i);
            }
            Path rules = dir.resolve("auto.rules");
            Files.writeString(rules, "bind * * auto\nconnect * * auto\n");
            rdmanio("sa", rules, dir.resolve("server.json"), "server", Integer.toString(PORT + 3));
            // A client on the server's own host binds the shared resolver port after it: before, its IPv6 query
            // went by unicast and reached its own socket only.
            Netns.Node here = rdmanio("sa", rules, dir.resolve("here.json"), "client");
            Netns.Node there = rdmanio("sb", rules, dir.resolve("there.json"), "client");
            String address = Netns.address6(0) + ":" + (PORT + 3);
            String fromHere = here.call(address, "CONNECTED");
            String fromThere = there.call(address, "CONNECTED");
            System.out.println("netns auto IPv6: " + fromHere + "\nnetns auto IPv6: " + fromThere);
            assertFalse(fromHere.contains("FAILED") || fromThere.contains("FAILED"), fromHere + " / " + fromThere);
            assertTrue(fromHere.contains("shm"), "same host, found through the group: " + fromHere);
            assertTrue(fromThere.contains("shm"), "another host, found through the group: " + fromThere);
        } finally {
            for (int i = 0; i < hosts.length; i++) {
                Netns.removeIpv6(hosts[i], i);
            }
        }
    }

    @Test
    void aClientReconnectsOverTheFabricToARestartedServer(@TempDir Path dir) throws Exception {
        Path rules = dir.resolve("auto.rules");
        Files.writeString(rules, "bind * * auto\nconnect * * auto\n");
        Netns.Node server = rdmanio("sa", rules, dir.resolve("server1.json"), "server", Integer.toString(PORT + 1));
        Netns.Node client = rdmanio("sb", rules, dir.resolve("client.json"), "client");
        String address = SA + ":" + (PORT + 1);
        assertTrue(client.call(address, "CONNECTED").contains("shm"));

        long crashed = System.nanoTime();
        server.crash();
        String down = client.call(address, "CONNECTED");
        assertTrue(down.contains("FAILED"), "nothing listens while the server is down: " + down);
        rdmanio("sa", rules, dir.resolve("server2.json"), "server", Integer.toString(PORT + 1));
        long started = System.nanoTime();
        String again;
        int attempts = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        do {
            again = client.call(address, "CONNECTED");
            attempts++;
        } while (!again.contains("shm") && System.nanoTime() < deadline);
        long recovered = System.nanoTime();
        assertTrue(again.contains("shm"), "the client is back on the fabric: " + again);
        System.out.printf("netns auto restart: back on shm %d ms after the crash (server start %d ms, then %d ms,"
                + " %d connects)%n", TimeUnit.NANOSECONDS.toMillis(recovered - crashed),
            TimeUnit.NANOSECONDS.toMillis(started - crashed), TimeUnit.NANOSECONDS.toMillis(recovered - started),
            attempts);
    }

    private static long counter(String json, String section, String name) {
        int at = json.indexOf("\"" + section + "\"");
        Matcher m = Pattern.compile("\"" + name + "\"\\s*:\\s*(\\d+)").matcher(json);
        if (at < 0 || !m.find(at)) {
            throw new AssertionError("no " + section + "." + name + " in " + json);
        }
        return Long.parseLong(m.group(1));
    }
}
