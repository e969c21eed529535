package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RulesTest {

    /** A fixed table instead of DNS, so the tests do not depend on the machine's resolver. */
    private static final Rules.HostResolver HOSTS = host -> {
        Map<String, String[]> table = Map.of(
                "db.example.test", new String[] {"10.1.2.3"},
                "dual.example.test", new String[] {"10.9.9.9", "fd00::9"});
        String[] addresses = table.get(host);
        if (addresses == null) {
            throw new UnknownHostException(host);
        }
        InetAddress[] result = new InetAddress[addresses.length];
        for (int i = 0; i < addresses.length; i++) {
            result[i] = InetAddress.getByName(addresses[i]);
        }
        return result;
    };

    private static Rules rules(String text) {
        return Rules.parse("test.rules", text, HOSTS);
    }

    private static InetSocketAddress at(String ip, int port) throws UnknownHostException {
        return new InetSocketAddress(InetAddress.getByName(ip), port);
    }

    private static RulesException error(String text) {
        return assertThrows(RulesException.class, () -> rules(text));
    }

    @Test
    void defaultActionIsRdmaAndRouteNamesFileLineAndText() throws Exception {
        Rules r = rules("# header\n\nconnect 127.0.0.1 5000\n");
        Route route = r.forConnect(at("127.0.0.1", 5000));
        assertEquals(Action.RDMA, route.action());
        assertEquals("test.rules:3: connect 127.0.0.1 5000", route.rule());
        assertTrue(route.usesFabric());
    }

    @Test
    void noMatchIsTcpWithoutRule() throws Exception {
        Rules r = rules("connect 127.0.0.1 5000");
        assertSame(Route.NO_MATCH, r.forConnect(at("127.0.0.1", 5001)));
        assertSame(Route.NO_MATCH, r.forConnect(at("127.0.0.2", 5000)));
        assertEquals(Action.TCP, Route.NO_MATCH.action());
        assertNull(Route.NO_MATCH.rule());
    }

    /**
     * This host's loopback is one place whichever family reaches it: with no rule for {@code ::1}, it routes as
     * {@code 127.0.0.1} (the JDK connects to {@code ::1} for a wildcard server's {@code [::]}), and the other way;
     * a rule that names it wins, and no other address is widened.
     */
    @Test
    void eitherLoopbackRoutesAsTheOtherWhenNoRuleNamesIt() throws Exception {
        Rules r = rules("connect 127.0.0.1 5000\nbind ::1 6000 both\n");
        assertEquals(Action.RDMA, r.forConnect(at("::1", 5000)).action());
        assertEquals(Action.BOTH, r.forBind(at("127.0.0.1", 6000)).action());
        assertSame(Route.NO_MATCH, r.forConnect(at("::1", 5001)));
        assertSame(Route.NO_MATCH, r.forConnect(at("127.0.0.2", 5000)));
        assertSame(Route.NO_MATCH, r.forConnect(at("::2", 5000)));
        Rules named = rules("connect ::1 5000 tcp\nconnect 127.0.0.1 5000\n");
        assertEquals(Action.TCP, named.forConnect(at("::1", 5000)).action());
        assertEquals(Action.RDMA, named.forConnect(at("127.0.0.1", 5000)).action());
    }

    /** What decides whether the agent installs java.net's socket factories at all. */
    @Test
    void routesNothingOnlyWithoutAFabricRule() throws Exception {
        assertTrue(rules("# none\n").routesNothing());
        assertTrue(rules("connect 127.0.0.1 * tcp\nbind * 80 tcp\n").routesNothing());
        assertFalse(rules("connect 127.0.0.1 * tcp\nbind * 80\n").routesNothing());
        assertFalse(rules("connect 10.0.0.0/8 * both\n").routesNothing());
        assertFalse(rules("connect 10.0.0.0/8 * auto\n").routesNothing());
        assertTrue(Rules.NONE.routesNothing());
    }

    @Test
    void emptyFileRoutesNothing() throws Exception {
        Rules r = rules("  # only comments\n\t\n");
        assertEquals(0, r.size());
        assertSame(Route.NO_MATCH, r.forBind(at("0.0.0.0", 80)));
        assertSame(Route.NO_MATCH, Rules.NONE.forConnect(at("127.0.0.1", 80)));
    }

    @Test
    void bindAndConnectRulesAreSeparate() throws Exception {
        Rules r = rules("bind * 7000\nconnect * 8000");
        assertEquals(Action.RDMA, r.forBind(at("0.0.0.0", 7000)).action());
        assertSame(Route.NO_MATCH, r.forConnect(at("127.0.0.1", 7000)));
        assertEquals(Action.RDMA, r.forConnect(at("127.0.0.1", 8000)).action());
        assertSame(Route.NO_MATCH, r.forBind(at("0.0.0.0", 8000)));
    }

    @ParameterizedTest
    @CsvSource({"rdma,RDMA", "tcp,TCP", "both,BOTH", "auto,AUTO"})
    void everyAction(String word, Action action) throws Exception {
        assertEquals(action, rules("connect * * " + word).forConnect(at("10.0.0.1", 1)).action());
    }

    @Test
    void firstMatchWins() throws Exception {
        Rules r = rules(String.join("\n",
                "connect 10.0.0.5 * tcp",
                "connect 10.0.0.0/8 * rdma",
                "connect * 9000 both"));
        assertEquals(Action.TCP, r.forConnect(at("10.0.0.5", 9000)).action());
        assertEquals("test.rules:1: connect 10.0.0.5 * tcp", r.forConnect(at("10.0.0.5", 9000)).rule());
        assertEquals(Action.RDMA, r.forConnect(at("10.0.0.6", 9000)).action());
        assertEquals(Action.BOTH, r.forConnect(at("192.168.0.1", 9000)).action());
        assertSame(Route.NO_MATCH, r.forConnect(at("192.168.0.1", 9001)));
    }

    @Test
    void portForms() throws Exception {
        Rules r = rules(String.join("\n",
                "connect 10.0.0.1 80",
                "connect 10.0.0.2 1000-2000",
                "connect 10.0.0.3 1024-*",
                "connect 10.0.0.4 *",
                "connect 10.0.0.5 0-65535"));
        assertEquals(Action.RDMA, r.forConnect(at("10.0.0.1", 80)).action());
        assertSame(Route.NO_MATCH, r.forConnect(at("10.0.0.1", 81)));
        assertSame(Route.NO_MATCH, r.forConnect(at("10.0.0.2", 999)));
        assertEquals(Action.RDMA, r.forConnect(at("10.0.0.2", 1000)).action());
        assertEquals(Action.RDMA, r.forConnect(at("10.0.0.2", 2000)).action());
        assertSame(Route.NO_MATCH, r.forConnect(at("10.0.0.2", 2001)));
        assertSame(Route.NO_MATCH, r.forConnect(at("10.0.0.3", 1023)));
        assertEquals(Action.RDMA, r.forConnect(at("10.0.0.3", 65535)).action());
        assertEquals(Action.RDMA, r.forConnect(at("10.0.0.4", 0)).action());
        assertEquals(Action.RDMA, r.forConnect(at("10.0.0.5", 65535)).action());
    }

    @Test
    void ipv4Prefixes() throws Exception {
        Rules r = rules(String.join("\n",
                "connect 192.168.4.0/22 * tcp",
                "connect 172.16.0.0/12 * both",
                "connect 0.0.0.0/0 * rdma"));
        assertEquals(Action.TCP, r.forConnect(at("192.168.7.255", 1)).action());
        assertEquals(Action.RDMA, r.forConnect(at("192.168.8.0", 1)).action());
        assertEquals(Action.BOTH, r.forConnect(at("172.31.1.1", 1)).action());
        assertEquals(Action.RDMA, r.forConnect(at("172.32.0.1", 1)).action());
        // An IPv4 rule, even /0, never matches an IPv6 address.
        assertSame(Route.NO_MATCH, r.forConnect(at("::1", 1)));
    }

    @Test
    void hostBitsBeyondThePrefixAreIgnored() throws Exception {
        Rules r = rules("connect 10.1.2.3/16 *");
        assertEquals(Action.RDMA, r.forConnect(at("10.1.200.200", 1)).action());
        assertSame(Route.NO_MATCH, r.forConnect(at("10.2.0.1", 1)));
    }

    @Test
    void ipv6AddressesAndPrefixes() throws Exception {
        Rules r = rules(String.join("\n",
                "connect ::1 * tcp",
                "connect [fe80::1] 22",
                "connect 2001:db8::/32 * both",
                "connect fd00:1:2:3::/63 * auto",
                "connect ::/0 * rdma"));
        assertEquals(Action.TCP, r.forConnect(at("::1", 5)).action());
        assertEquals(Action.RDMA, r.forConnect(at("fe80::1", 22)).action());
        assertEquals(Action.BOTH, r.forConnect(at("2001:db8:ffff::1", 5)).action());
        assertEquals(Action.RDMA, r.forConnect(at("2001:db9::1", 5)).action());
        assertEquals(Action.AUTO, r.forConnect(at("fd00:1:2:2::1", 5)).action());
        assertEquals(Action.AUTO, r.forConnect(at("fd00:1:2:3:ffff::1", 5)).action());
        assertEquals(Action.RDMA, r.forConnect(at("fd00:1:2:4::1", 5)).action());
        // IPv6 rules, even ::/0, never match an IPv4 address; only the rule naming ::1 holds for 127.0.0.1.
        assertSame(Route.NO_MATCH, r.forConnect(at("127.0.0.2", 5)));
        assertEquals("test.rules:1: connect ::1 * tcp", r.forConnect(at("127.0.0.1", 5)).rule());
    }

    @Test
    void ipv4MappedPrefixCountsTheMappingBits() throws Exception {
        Rules r = rules("connect ::ffff:10.0.0.0/104 *");
        assertEquals(Action.RDMA, r.forConnect(at("10.200.0.1", 1)).action());
        assertSame(Route.NO_MATCH, r.forConnect(at("11.0.0.1", 1)));
    }

    @Test
    void hostNamesResolveToEveryAddressAtLoad() throws Exception {
        Rules r = rules("connect dual.example.test 443\nconnect db.example.test 5432 tcp");
        assertEquals(2, r.size());
        assertEquals("test.rules:1: connect dual.example.test 443", r.forConnect(at("10.9.9.9", 443)).rule());
        assertEquals("test.rules:1: connect dual.example.test 443", r.forConnect(at("fd00::9", 443)).rule());
        assertEquals(Action.TCP, r.forConnect(at("10.1.2.3", 5432)).action());
    }

    @Test
    void localhostResolvesWithTheSystemResolver() throws Exception {
        Rules r = Rules.parse("sys.rules", "connect localhost *", InetAddress::getAllByName);
        for (InetAddress a : InetAddress.getAllByName("localhost")) {
            assertEquals(Action.RDMA, r.forConnect(new InetSocketAddress(a, 1)).action());
        }
    }

    @Test
    void wildcardBindIsMatchedByStarNotByAnInterfaceAddress() throws Exception {
        Rules r = rules("bind 127.0.0.1 9000\nbind * 9001 both\nbind 10.0.0.0/8 9002\nbind 127.0.0.1 9003 tcp");
        assertEquals(Action.RDMA, r.forBind(at("127.0.0.1", 9000)).action());
        // A wildcard listener listens on the loopback too: a rule routing the loopback's port makes it both.
        assertEquals(Action.BOTH, r.forBind(at("0.0.0.0", 9000)).action());
        assertEquals(Action.BOTH, r.forBind(at("::", 9000)).action());
        assertSame(Route.NO_MATCH, r.forBind(at("0.0.0.0", 9002)), "another interface's rule does not decide it");
        assertSame(Route.NO_MATCH, r.forBind(at("0.0.0.0", 9003)), "the loopback's port on TCP: TCP");
        assertEquals(Action.BOTH, r.forBind(at("0.0.0.0", 9001)).action());
        assertEquals(Action.BOTH, r.forBind(at("::", 9001)).action());
    }

    @Test
    void unresolvedSocketAddressIsMatchedOnlyByStar() throws Exception {
        Rules r = rules("connect 10.0.0.0/8 *\nconnect * 80 tcp");
        InetSocketAddress unresolved = InetSocketAddress.createUnresolved("nowhere.test", 80);
        assertEquals(Action.TCP, r.forConnect(unresolved).action());
    }

    @Test
    void commentsAndWhitespace() throws Exception {
        Rules r = rules("\t connect\t10.0.0.1   80\ttcp   # trailing comment\r\n#connect * * rdma\r\n");
        Route route = r.forConnect(at("10.0.0.1", 80));
        assertEquals(Action.TCP, route.action());
        assertEquals("test.rules:1: connect\t10.0.0.1   80\ttcp", route.rule());
        assertSame(Route.NO_MATCH, r.forConnect(at("10.0.0.2", 80)));
    }

    /** A Java SDP configuration file, in that format's own forms, is a valid rules file with the default action. */
    @Test
    void sdpConfigurationFileIsAValidRulesFile(@TempDir Path dir) throws Exception {
        Path sdp = dir.resolve("sdp.conf");
        Files.writeString(sdp, String.join("\n",
                "#",
                "# SDP configuration for the storage cluster",
                "#",
                "",
                "# the replication listener on the InfiniBand interface",
                "bind 192.168.50.10 *",
                "bind\t192.168.50.10\t7000-7099",
                "",
                "# every service port on the IB subnet",
                "connect 192.168.50.0/24     1024-*",
                "",
                "# the database host by name, and an IPv6 subnet",
                "connect db.example.test   5432",
                "connect fd00:50::/64 *",
                "connect 10.20.30.40 8080-8090",
                ""), StandardCharsets.US_ASCII);
        Rules r = Rules.load(sdp, HOSTS);
        assertEquals(6, r.size());
        assertEquals(sdp + ":6: bind 192.168.50.10 *", r.forBind(at("192.168.50.10", 1)).rule());
        assertEquals(Action.RDMA, r.forConnect(at("192.168.50.77", 1024)).action());
        assertSame(Route.NO_MATCH, r.forConnect(at("192.168.50.77", 1023)));
        assertEquals(Action.RDMA, r.forConnect(at("10.1.2.3", 5432)).action());
        assertEquals(Action.RDMA, r.forConnect(at("fd00:50::1", 9)).action());
        assertEquals(Action.RDMA, r.forConnect(at("10.20.30.40", 8085)).action());
        assertSame(Route.NO_MATCH, r.forConnect(at("10.20.30.41", 8085)));
    }

    @Test
    void errorsNameFileLineReasonAndText() {
        RulesException e = error("# ok\nconnect 10.0.0.1 80\nconnect 10.0.0.1 80 fast  # comment");
        assertEquals("test.rules:3: unknown action 'fast': expected rdma, tcp, both or auto (connect 10.0.0.1 80 fast)",
                e.getMessage());
        assertEquals("test.rules", e.file());
        assertEquals(3, e.line());
        assertEquals("unknown action 'fast': expected rdma, tcp, both or auto", e.reason());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '^', value = {
        "connect 10.0.0.1                 ^ incomplete rule: expected 'bind|connect HOST PORT [ACTION]'",
        "connect                          ^ incomplete rule: expected 'bind|connect HOST PORT [ACTION]'",
        "connect * * rdma extra           ^ unexpected 'extra' after the action",
        "accept * *                       ^ unknown direction 'accept': expected bind or connect",
        "CONNECT * *                      ^ unknown direction 'CONNECT': expected bind or connect",
        "connect * * RDMA                 ^ unknown action 'RDMA': expected rdma, tcp, both or auto",
        "connect 10.0.0.256 *             ^ bad IPv4 address '10.0.0.256': 256 is more than 255",
        "connect 10.0.1 *                 ^ bad IPv4 address '10.0.1': expected four numbers 0..255 separated by dots",
        "connect 10.0.0.0/33 *            ^ prefix /33 out of range 0..32 for the IPv4 address '10.0.0.0'",
        "connect 10.0.0.0/ *              ^ bad prefix '/' after '10.0.0.0': expected a number of bits",
        "connect 10.0.0.0/x *             ^ bad prefix '/x' after '10.0.0.0': expected a number of bits",
        "connect ::1/129 *                ^ prefix /129 out of range 0..128 for the IPv6 address '::1'",
        "connect ::ffff:10.0.0.0/8 *      ^ prefix /8 out of range 96..128 for the IPv4-mapped address '::ffff:10.0.0.0'",
        "connect 1:2:3 *                  ^ bad IPv6 address '1:2:3'",
        "connect fe80::zz *               ^ bad IPv6 address 'fe80::zz'",
        "connect db.example.test/24 *     ^ a /PREFIX needs an IP address, not the host name 'db.example.test'",
        "connect no.such.host.test *      ^ host name 'no.such.host.test' does not resolve",
        "connect bad!host *               ^ bad host 'bad!host': expected a host name, an IP address[/PREFIX] or *",
        "connect * 65536                  ^ port 65536 out of range 0..65535",
        "connect * 123456                 ^ bad port '123456' in '123456': expected a number 0..65535 or *",
        "connect * -1                     ^ bad port range '-1': expected PORT, PORT-PORT, PORT-* or *",
        "connect * 80-                    ^ bad port range '80-': expected PORT, PORT-PORT, PORT-* or *",
        "connect * *-80                   ^ bad port range '*-80': expected PORT, PORT-PORT, PORT-* or *",
        "connect * 90-80                  ^ port range '90-80' runs backwards: 90 > 80",
        "connect * 80-70000               ^ port 70000 out of range 0..65535",
        "connect * http                   ^ bad port 'http' in 'http': expected a number 0..65535 or *",
    })
    void eachSyntaxErrorIsReportedWithFileAndLine(String rule, String reason) {
        RulesException e = error("# line 1\n" + rule.strip() + "\n");
        assertEquals("test.rules:2: " + reason + " (" + rule.strip() + ")", e.getMessage());
        assertEquals(2, e.line());
    }

    @Test
    void missingFileNamesThePath(@TempDir Path dir) {
        Path missing = dir.resolve("missing.rules");
        ConfigException e = assertThrows(ConfigException.class, () -> Rules.load(missing, HOSTS));
        assertEquals("rules file " + missing + " does not exist", e.getMessage());
    }

    @Test
    void directoryIsNotARulesFile(@TempDir Path dir) {
        ConfigException e = assertThrows(ConfigException.class, () -> Rules.load(dir, HOSTS));
        assertEquals("rules file " + dir + " is a directory, not a file", e.getMessage());
    }

    @Test
    void errorInAFileNamesTheFilePath(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("bad.rules");
        Files.writeString(file, "bind * *\n\nconnect * 99999\n");
        RulesException e = assertThrows(RulesException.class, () -> Rules.load(file, HOSTS));
        assertEquals(file + ":3: port 99999 out of range 0..65535 (connect * 99999)", e.getMessage());
    }
}
