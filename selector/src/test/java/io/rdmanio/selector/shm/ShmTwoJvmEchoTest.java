package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An unmodified selector echo server and an unmodified echo client in two JVMs, both activated by system
 * property with {@code fabric=shm}: a hundred concurrent connections of random sizes up to 2 MiB come back
 * byte-exact, and both stats files show every connection carried by the fabric.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ShmTwoJvmEchoTest {

    private static final int CONNECTIONS = 100;
    private static final int MAX_BYTES = 2 * 1024 * 1024;

    @TempDir
    Path tmp;

    private Path shmDir;

    @BeforeEach
    void directory() throws IOException {
        shmDir = ShmNio.newDirectory();
    }

    @AfterEach
    void removeDirectory() throws IOException {
        ShmNio.deleteDirectory(shmDir);
    }

    @Test
    void hundredConnectionsEchoByteExactAllOnTheFabric() throws Exception {
        Path rules = PeerJvm.rules(tmp);
        Path serverStats = tmp.resolve("server-stats.json");
        Path clientStats = tmp.resolve("client-stats.json");
        long seed = System.nanoTime();
        System.out.println("echo seed " + seed);
        try (PeerJvm server = PeerJvm.start(shmDir, rules, serverStats, EchoServerMain.class)) {
            int port = Integer.parseInt(server.expect("PORT ").substring(5));
            PeerJvm client = PeerJvm.start(shmDir, rules, clientStats, EchoClientMain.class,
                Integer.toString(port), Integer.toString(CONNECTIONS), Integer.toString(MAX_BYTES), Long.toString(seed));
            int clientExit = client.awaitExit();
            assertEquals(0, clientExit, client::output);
            Matcher ok = Pattern.compile("OK (\\d+) (\\d+)").matcher(client.output());
            assertTrue(ok.find(), client::output);
            long bytes = Long.parseLong(ok.group(2));
            server.close();
            assertEquals(0, server.awaitExit(), server::output);
            assertTrue(server.output().contains("SERVED " + CONNECTIONS + " connections, " + bytes + " bytes"),
                server::output);
            // Every connection at both ends on the fabric, none on TCP; every byte written and read at each end.
            for (Path stats : new Path[] {serverStats, clientStats}) {
                String json = Files.readString(stats);
                assertEquals(CONNECTIONS, stat(json, "connections", 1), json);
                assertEquals(0, stat(json, "connections", 2), json);
                assertEquals(2 * bytes, stat(json, "bytes", 1), json);
                assertEquals(0, stat(json, "bytes", 2), json);
                assertTrue(json.contains("\"fabric\": \"shm\""), json);
            }
        }
        assertEquals(java.util.List.of(), ShmNio.entriesOf(shmDir), "nothing left in the shm directory");
    }

    /** {@code "section": {"rdma": A, "tcp": B}}: group 1 is A, group 2 is B. */
    private static long stat(String json, String section, int group) {
        Matcher m = Pattern.compile("\"" + section + "\": \\{\\s*\"rdma\": (\\d+),\\s*\"tcp\": (\\d+)").matcher(json);
        assertTrue(m.find(), "no " + section + " in " + json);
        return Long.parseLong(m.group(group));
    }
}
