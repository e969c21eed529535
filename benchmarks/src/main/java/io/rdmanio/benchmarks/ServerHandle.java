package io.rdmanio.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An {@link EchoServer} for a benchmark: in this JVM on a thread (the loopback fabric, which connects only within a
 * JVM), or in a second JVM started with the same transport flags (TCP and shm: a real two-process setup).
 */
public final class ServerHandle implements AutoCloseable {
    private final EchoServer local;
    private final Process process;
    private final InetSocketAddress address;

    private ServerHandle(EchoServer local, Process process, InetSocketAddress address) {
        this.local = local;
        this.process = process;
        this.address = address;
    }

    public InetSocketAddress address() {
        return address;
    }

    /** Starts the server for {@code transport}; {@code socketBuffer} 0 leaves the socket buffers at default. */
    public static ServerHandle start(Transport transport, int socketBuffer, List<String> extraFlags)
            throws IOException {
        if (transport.inProcessOnly()) {
            EchoServer s = new EchoServer(new InetSocketAddress(transport.host(), 0), socketBuffer).start();
            return new ServerHandle(s, null, s.address());
        }
        int port = freePort();
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xms256m");
        cmd.add("-Xmx256m");
        cmd.addAll(inheritedFlags());
        cmd.addAll(extraFlags);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(EchoServer.class.getName());
        cmd.add(transport.host());
        cmd.add(Integer.toString(port));
        cmd.add(Integer.toString(socketBuffer));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        // Lines before READY are skipped (a profiler or other tool agent given through JAVA_TOOL_OPTIONS may
        // print one), within a bound.
        String line = out.readLine();
        for (int skipped = 0; line != null && !line.startsWith("READY ") && skipped < 20; skipped++) {
            line = out.readLine();
        }
        if (line == null || !line.startsWith("READY ")) {
            p.destroyForcibly();
            throw new IOException("the " + transport.label() + " echo server process did not start (said: " + line
                    + "; command: " + String.join(" ", cmd) + ")");
        }
        return new ServerHandle(null, p, new InetSocketAddress(transport.host(), port));
    }

    /** The transport flags of this JVM, so the server process runs on the same transport. */
    static List<String> inheritedFlags() {
        List<String> flags = new ArrayList<>();
        String provider = System.getProperty("java.nio.channels.spi.SelectorProvider");
        if (provider != null) {
            flags.add("-Djava.nio.channels.spi.SelectorProvider=" + provider);
            flags.add("--add-exports");
            flags.add("java.base/sun.nio.ch=ALL-UNNAMED");
        }
        for (String name : System.getProperties().stringPropertyNames()) {
            if ((name.startsWith("rdmanio.") && !name.equals("rdmanio.stats")) || name.equals("bench.transport")
                    || name.equals("slf4j.internal.verbosity")) {
                flags.add("-D" + name + "=" + System.getProperty(name));
            }
        }
        return flags;
    }

    static int freePort() throws IOException {
        // java.net.ServerSocket does not go through the SelectorProvider: this probes the kernel's port space.
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() throws IOException {
        if (local != null) {
            local.close();
        }
        if (process != null) {
            process.getOutputStream().close();
            try {
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }
}
