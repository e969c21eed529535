package io.rdmanio.examples.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application that installs its own java.net factories after the agent installed rdmanio's gets them, as on
 * the JDK alone: rdmanio's step aside, the sockets made before (routed to the fabric) work on, a second factory is
 * refused as java.net refuses one, and the stats say that java.net is no longer routed.
 */
class ApplicationFactoryTest {

    @TempDir
    Path dir;

    @Test
    void theApplicationsOwnFactoriesTakeOverAsOnTheJdk() throws Exception {
        AgentJvm.Outcome jdk = AgentJvm.run(dir, "-", ApplicationFactoryMain.class);
        assertEquals(0, jdk.exitCode(), jdk::describe);
        String expected = String.join("\n",
                "the application's factories installed",
                "a socket made before: ping",
                "a new socket: the application's socket implementation refuses",
                "client sockets from the application's factory: 1",
                "a new server socket: the application's socket implementation refuses",
                "server sockets from the application's factory: 1",
                "a second socket factory: factory already defined",
                "a second server socket factory: factory already defined");
        assertEquals(expected, jdk.stdout().strip(), jdk::describe);

        Path rules = Files.writeString(dir.resolve("rules"), "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        Path stats = dir.resolve("stats.json");
        AgentJvm.Outcome routed = AgentJvm.run(dir, "rules=" + rules + ",fabric=shm,stats=" + stats,
                ApplicationFactoryMain.class);
        assertEquals(0, routed.exitCode(), routed::describe);
        assertEquals(expected, routed.stdout().strip(), routed::describe);
        // The two sockets made before the application's factories: one connection, counted at both ends.
        assertEquals(2, AgentJvm.stat(stats, "connections", "rdma"), routed::describe);
        assertEquals(0, AgentJvm.stat(stats, "connections", "tcp"), routed::describe);
        String json = Files.readString(stats);
        assertTrue(json.contains("\"javaNet\": \"not routed from now on: the application installed its own server"
                + " socket factory"), json);
        assertTrue(routed.stderr().contains("java.net Socket is not routed from now on: the application installed"
                + " its own socket factory"), routed::describe);
    }
}
