package io.rdmanio.examples.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two processes: a client connects to a server that never accepts, and the server's process ends (it exits, is
 * sent SIGTERM, or is killed with SIGKILL) while the client blocks in a read. The kernel closes the dead process's
 * listener and resets the connections waiting in its accept queue: the client's read fails with "Connection
 * reset" and its writes with "Broken pipe". The same over shm (where an ended listening process used to end such a
 * connection in order: end of stream, then one write taken).
 */
class ServerDiesWithUnacceptedConnectionTest {

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"exit", "sigterm", "sigkill"})
    void theClientIsResetAsByTheKernel(String ending) throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/dev/shm")) && Files.isWritable(Path.of("/dev/shm")),
                "needs a writable /dev/shm");
        Path rules = dir.resolve("local.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        String expected = "read SocketException: Connection reset\nwrite 1 IOException: Broken pipe\n"
                + "write 2 IOException: Broken pipe\n";
        assertEquals(expected, run("jdk", "-", ending), "the JDK's own run");
        assertEquals(expected, run("shm", "rules=" + rules + ",fabric=shm", ending), "over shm");
    }

    private String run(String name, String agentOptions, String ending) throws Exception {
        String tag = name + "-" + ending;
        Path go = dir.resolve(tag + ".go");
        AgentJvm.Child server = AgentJvm.start(dir, tag + "-server", agentOptions, UnacceptingServerMain.class,
                go.toString());
        try {
            String port = server.awaitLine("^listening (\\d+)$");
            AgentJvm.Child client = AgentJvm.start(dir, tag + "-client", agentOptions,
                    ClientOfDyingServerMain.class, port);
            client.awaitLine("^connected$");
            switch (ending) {
                case "exit" -> Files.createFile(go);
                case "sigterm" -> server.process().destroy();
                default -> server.process().destroyForcibly();
            }
            server.process().waitFor(60, TimeUnit.SECONDS);
            AgentJvm.Outcome out = client.await();
            assertEquals(0, out.exitCode(), out::describe);
            return out.stdout().replaceFirst("^connected\n", "");
        } finally {
            if (server.process().isAlive()) {
                server.stop();
            }
        }
    }
}
