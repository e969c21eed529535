package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.selector.RdmaSelectorProvider;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ./rdmanio stats PID} reads a live JVM through the Attach API, as an operator would. */
class StatsCommandTest {

    /**
     * The live process: the system-wide provider, a server on 127.0.0.1 and a client of it, both on the fabric
     * the rules name; 5 bytes one way, 3 the other; then it holds both until its standard input closes.
     */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            try (ServerSocketChannel server = ServerSocketChannel.open()) {
                server.bind(new InetSocketAddress("127.0.0.1", 0));
                try (SocketChannel client = SocketChannel.open(server.getLocalAddress());
                     SocketChannel accepted = server.accept()) {
                    client.write(ByteBuffer.wrap(new byte[5]));
                    ByteBuffer in = ByteBuffer.allocate(5);
                    while (in.hasRemaining() && accepted.read(in) >= 0) {
                        // until the 5 bytes are in
                    }
                    accepted.write(ByteBuffer.wrap(new byte[3]));
                    ByteBuffer back = ByteBuffer.allocate(3);
                    while (back.hasRemaining() && client.read(back) >= 0) {
                        // until the 3 bytes are in
                    }
                    // The bean is registered by a thread of its own after the first routed connection.
                    javax.management.ObjectName bean = new javax.management.ObjectName(TransportStats.OBJECT_NAME);
                    while (!java.lang.management.ManagementFactory.getPlatformMBeanServer().isRegistered(bean)) {
                        Thread.sleep(5);
                    }
                    System.out.println("READY " + ((InetSocketAddress) server.getLocalAddress()).getPort());
                    System.out.flush();
                    while (System.in.read() >= 0) {
                        // held until the test closes the pipe
                    }
                }
            }
        }
    }

    /** A JVM without rdmanio: prints READY and waits for its standard input to close. */
    public static final class Plain {
        public static void main(String[] args) throws IOException {
            System.out.println("READY 0");
            System.out.flush();
            while (System.in.read() >= 0) {
                // held until the test closes the pipe
            }
        }
    }

    private record Run(int status, String out, String err) {
    }

    private static Run stats(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = StatsCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static Process start(Class<?> main, List<String> flags) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.addAll(flags);
        cmd.add(main.getName());
        return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    /** The child's READY port; fails if it exits or stays silent for a minute. */
    private static int awaitReady(Process p) throws IOException {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = r.readLine();
        assertTrue(line != null && line.startsWith("READY "), "the child did not start: " + line);
        return Integer.parseInt(line.substring(6).trim());
    }

    private static void end(Process p) throws Exception {
        p.getOutputStream().close();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
    }

    @Test
    void readsTheConnectionTableOfALiveProcess(@TempDir Path dir) throws Exception {
        Path rules = dir.resolve("stats.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        Process child = start(Child.class, List.of("--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
            "-Djava.nio.channels.spi.SelectorProvider=" + RdmaSelectorProvider.class.getName(),
            "-Drdmanio.rules=" + rules, "-Drdmanio.fabric=loopback"));
        try {
            int port = awaitReady(child);
            Run run = stats(Long.toString(child.pid()));
            assertEquals(0, run.status(), run.err());
            String out = run.out();
            assertTrue(out.contains("rdmanio in process " + child.pid() + ": fabric=loopback, rules=" + rules), out);
            assertTrue(out.contains("open fabric connections: {loopback=2}"), out);
            // Which JDK socket APIs follow the rules: NIO always; java.net and NIO.2 only with the agent.
            assertTrue(out.contains("routed APIs: {asyncChannels=not routed") && out.contains("nio=routed}"), out);
            assertTrue(out.contains("2 fabric connections:"), out);
            List<String> rows = out.lines().filter(l -> l.trim().startsWith("loopback ")).toList();
            assertEquals(2, rows.size(), out);
            String client = rows.stream().filter(l -> l.contains(" client ")).findFirst().orElseThrow();
            String server = rows.stream().filter(l -> l.contains(" server ")).findFirst().orElseThrow();
            // The client's peer is the server's port; each side's bytes as the application moved them.
            assertTrue(client.contains("127.0.0.1:" + port), client);
            assertTrue(client.matches(".* open +5 +3 +\\d+ +0 +\\d+(ms|m\\d+s)$"), client);
            assertTrue(server.matches(".* open +3 +5 +\\d+ +0 +\\d+(ms|m\\d+s)$"), server);
        } finally {
            end(child);
        }
    }

    @Test
    void aProcessWithoutRdmanioIsNamedAsSuch() throws Exception {
        Process plain = start(Plain.class, List.of());
        try {
            awaitReady(plain);
            Run run = stats(Long.toString(plain.pid()));
            assertEquals(1, run.status(), run.out() + run.err());
            assertTrue(run.err().contains("has no rdmanio to report"), run.err());
            assertEquals("", run.out());
        } finally {
            end(plain);
        }
    }

    @Test
    void aBadPidOrNoPidIsAUsageError() throws IOException {
        Run none = stats();
        assertEquals(2, none.status());
        assertTrue(none.err().startsWith("usage: ./rdmanio stats PID"), none.err());
        Run word = stats("java");
        assertEquals(2, word.status());
        // A process id no JVM has: the highest the kernel allows is below this.
        Run gone = stats("2147483646");
        assertEquals(2, gone.status(), gone.err());
        assertTrue(gone.err().contains("there is no process 2147483646"), gone.err());
        // A process that is not a JVM, of this user: named at once, without the attach's ten-second wait.
        Process sleep = new ProcessBuilder("sleep", "30").start();
        try {
            Run notJvm = stats(Long.toString(sleep.pid()));
            assertEquals(2, notJvm.status(), notJvm.err());
            assertTrue(notJvm.err().contains("process " + sleep.pid() + " is not a JVM"), notJvm.err());
        } finally {
            sleep.destroyForcibly();
        }
    }
}
