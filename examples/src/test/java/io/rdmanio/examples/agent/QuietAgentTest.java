package io.rdmanio.examples.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent changes nothing a program prints: a hello world started with it, and one whose connection the rules
 * put on the shm fabric, write exactly what they write without it and nothing on stderr, although neither has an
 * SLF4J provider on its class path (SLF4J itself would print its "no providers" notice there).
 */
class QuietAgentTest {

    @TempDir
    Path dir;

    @Test
    void helloWorldWithTheAgentWritesNothingToStderr() throws Exception {
        AgentJvm.Outcome o = AgentJvm.runAlone(dir, null, Hello.class);
        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("hello\n", o.stdout(), o::describe);
        assertEquals("", o.stderr(), o::describe);
    }

    @Test
    void aRoutedConnectionWritesNothingToStderr() throws Exception {
        Path rules = dir.resolve("hello.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        Path stats = dir.resolve("stats.json");
        AgentJvm.Outcome o = AgentJvm.runAlone(dir, "rules=" + rules + ",fabric=shm,stats=" + stats, Hello.class,
                "socket");
        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("hello over a socket\n", o.stdout(), o::describe);
        assertEquals("", o.stderr(), o::describe);
        assertEquals(2, AgentJvm.stat(stats, "connections", "rdma"), () -> AgentActivationTest.read(stats));
    }

    /** Asked for ({@code debug=routing}), the routing decisions are printed on stderr, one line each. */
    @Test
    void theRoutingDebugSwitchPrintsEachDecision() throws Exception {
        Path rules = dir.resolve("hello.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        AgentJvm.Outcome o = AgentJvm.runAlone(dir, "rules=" + rules + ",fabric=shm,debug=routing", Hello.class,
                "socket");
        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("hello over a socket\n", o.stdout(), o::describe);
        String[] lines = o.stderr().split("\n");
        assertEquals(2, lines.length, o::describe);
        assertTrue(lines[0].matches("rdmanio\\[routing\\]: bind /127\\.0\\.0\\.1:0: fabric by .*hello\\.rules:1: bind"
                + " 127\\.0\\.0\\.1 \\*"), o::describe);
        assertTrue(lines[1].matches("rdmanio\\[routing\\]: connect to /127\\.0\\.0\\.1:\\d+: fabric by"
                + " .*hello\\.rules:2: connect 127\\.0\\.0\\.1 \\*"), o::describe);
    }

    /**
     * A native transport's event loop (here a stand-in under a shading prefix) is listed in the stats as bypassed,
     * without a word on stderr (it goes to the SLF4J logger, and the application has no provider).
     */
    @Test
    void aNativeTransportIsListedAsBypassed() throws Exception {
        Path stats = dir.resolve("stats.json");
        AgentJvm.Outcome o = AgentJvm.runAlone(dir, "stats=" + stats, Hello.class, "native");
        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("", o.stderr(), o::describe);
        String json = Files.readString(stats);
        assertTrue(json.contains("\"bypassed\": {\n    \"netty-epoll\": \"shaded.io.netty.channel.epoll.EpollEventLoop\"\n  }"),
            json);
    }

    /**
     * rdmanio's lines go to the application's SLF4J provider when it has one (slf4j-simple on the class path here),
     * although the agent carries SLF4J's API relocated: {@code io.rdmanio.core.ApplicationLogger} forwards them.
     */
    @Test
    void rdmaniosLinesReachTheApplicationsSlf4jProvider() throws Exception {
        Path stats = dir.resolve("stats.json");
        AgentJvm.Outcome o = AgentJvm.run(dir, "stats=" + stats, Hello.class, "native");
        assertEquals(0, o.exitCode(), o::describe);
        assertTrue(o.stderr().contains("WARN io.rdmanio.routing - ") && o.stderr().contains("EpollEventLoop"),
            o::describe);
        assertTrue(!o.stderr().contains("SLF4J"), "no notice of SLF4J's own: " + o.describe());
    }

    /** Prints hello; with the argument {@code socket}, sends it through a connection to itself first. */
    public static final class Hello {

        private Hello() {
        }

        public static void main(String[] args) throws IOException {
            if (args.length == 0) {
                System.out.println("hello");
                return;
            }
            if (args[0].equals("native")) {
                System.out.println("hello from " + shaded.io.netty.channel.epoll.EpollEventLoop.touch());
                return;
            }
            byte[] message = "hello over a socket".getBytes(StandardCharsets.US_ASCII);
            try (ServerSocketChannel server = ServerSocketChannel.open()
                    .bind(new InetSocketAddress("127.0.0.1", 0));
                 SocketChannel client = SocketChannel.open(server.getLocalAddress());
                 SocketChannel accepted = server.accept()) {
                client.write(ByteBuffer.wrap(message));
                ByteBuffer in = ByteBuffer.allocate(message.length);
                while (in.hasRemaining()) {
                    if (accepted.read(in) < 0) {
                        throw new IOException("end of stream after " + in.position() + " bytes");
                    }
                }
                System.out.println(new String(in.array(), StandardCharsets.US_ASCII));
            }
        }
    }
}
