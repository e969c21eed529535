package io.rdmanio.examples.echo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The unmodified echo example in a fresh JVM, activated by property: every connection the rules route goes over
 * the loopback fabric, every other one stays on the JDK's TCP, and every byte comes back intact.
 */
class EchoThroughRdmanioTest {

    @TempDir
    Path dir;

    private static final Pattern CLIENT_BYTES = Pattern.compile("echo client .*: \\d+ messages, (\\d+) bytes, .* ok");

    /** The bytes the clients' own output reports having echoed. */
    private static long echoedBytes(String stdout) {
        Matcher m = CLIENT_BYTES.matcher(stdout);
        long total = 0;
        while (m.find()) {
            total += Long.parseLong(m.group(1));
        }
        return total;
    }

    @Test
    void everyRoutedConnectionIsCarriedByTheFabric() throws Exception {
        Path rules = dir.resolve("loopback.rules");
        Files.writeString(rules, "# the echo server and its clients, all on 127.0.0.1\n"
                + "bind 127.0.0.1 * rdma\n"
                + "connect 127.0.0.1 *\n");
        Path stats = dir.resolve("stats.json");
        int clients = 3;
        FreshJvm.Outcome outcome = FreshJvm.run(dir,
                Map.of("rdmanio.rules", rules.toString(), "rdmanio.fabric", "loopback", "rdmanio.stats", stats.toString()),
                EchoDemo.class, "--clients", String.valueOf(clients), "--messages", "200", "127.0.0.1");
        assertEquals(0, outcome.exitCode(), outcome::describe);
        assertTrue(outcome.stdout().contains("all echoes intact"), outcome::describe);
        long echoed = echoedBytes(outcome.stdout());
        assertTrue(echoed > 0, outcome::describe);
        // Each connection is counted at both of its ends: the client's connect and the server's accept.
        assertEquals(2L * clients, FreshJvm.stat(stats, "connections", "rdma"), () -> read(stats));
        assertEquals(0L, FreshJvm.stat(stats, "connections", "tcp"), () -> read(stats));
        // Every echoed byte is written and read by the client, and read and written by the server.
        assertEquals(4 * echoed, FreshJvm.stat(stats, "bytes", "rdma"), () -> read(stats));
        assertEquals(0L, FreshJvm.stat(stats, "bytes", "tcp"), () -> read(stats));
        assertTrue(read(stats).contains("\"fabric\": \"loopback\""), () -> read(stats));
    }

    @Test
    void connectionsTheRulesDoNotRouteStayOnTcp() throws Exception {
        Path rules = dir.resolve("mixed.rules");
        Files.writeString(rules, "bind 127.0.0.1 * rdma\n"
                + "connect 127.0.0.1 * rdma\n"
                + "# 127.0.0.2 matches no rule: kernel TCP\n");
        Path stats = dir.resolve("stats.json");
        FreshJvm.Outcome outcome = FreshJvm.run(dir,
                Map.of("rdmanio.rules", rules.toString(), "rdmanio.fabric", "loopback", "rdmanio.stats", stats.toString()),
                EchoDemo.class, "--clients", "1", "--messages", "50", "127.0.0.1", "127.0.0.2");
        assertEquals(0, outcome.exitCode(), outcome::describe);
        assertTrue(outcome.stdout().contains("all echoes intact"), outcome::describe);
        assertEquals(2L, FreshJvm.stat(stats, "connections", "rdma"), () -> read(stats));
        assertEquals(2L, FreshJvm.stat(stats, "connections", "tcp"), () -> read(stats));
        assertEquals(4 * echoedBytes(outcome.stdout()),
                FreshJvm.stat(stats, "bytes", "rdma") + FreshJvm.stat(stats, "bytes", "tcp"), () -> read(stats));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }
}
