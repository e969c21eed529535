package io.rdmanio.core.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A test network of hosts made of network namespaces: {@code rdmanio-t-PID-sw} holds a bridge, and each host
 * {@code rdmanio-t-PID-X} has {@code eth0} on 10.231.0.N/24, a veth pair into the bridge. Only what this class
 * creates is touched; {@link #destroy()} deletes the namespaces, which removes their links with them. Shared by
 * the resolver's tests (core) and the {@code auto} routing tests (selector), through core's test jar.
 */
public final class Netns {

    /**
     * Namespace names carry this JVM's pid, so that test runs at once (other checkouts, other builds) never delete
     * each other's hosts; {@link #destroy()} also removes what a run whose JVM is gone left behind.
     */
    public static final String PREFIX = "rdmanio-t-" + ProcessHandle.current().pid() + "-";
    private static final java.util.regex.Pattern ANY_RUN = java.util.regex.Pattern.compile("rdmanio-t-(\\d+)-.*");
    static final String SWITCH = PREFIX + "sw";
    public static final String SUBNET = "10.231.0.";

    private Netns() {
    }

    /** {@code null} when namespaces can be made here, else why not. */
    public static String unavailableReason() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return "network namespace tests need root (running as " + System.getProperty("user.name") + ")";
        }
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return "network namespaces are Linux only";
        }
        try {
            Result r = run("ip", "netns", "list");
            if (r.code != 0) {
                return "`ip netns list` failed: " + r.output;
            }
            String probe = PREFIX + "probe";
            run("ip", "netns", "del", probe);
            Result add = run("ip", "netns", "add", probe);
            run("ip", "netns", "del", probe);
            if (add.code != 0) {
                return "`ip netns add` failed: " + add.output;
            }
        } catch (IOException e) {
            return "the ip command is not available: " + e.getMessage();
        }
        return null;
    }

    /** Creates hosts {@code names[i]} at 10.231.0.(i+1), after removing what a run left. */
    public static void create(String... names) throws IOException {
        destroy();
        ensure("ip", "netns", "add", SWITCH);
        ensure("ip", "netns", "exec", SWITCH, "ip", "link", "add", "br0", "type", "bridge");
        ensure("ip", "netns", "exec", SWITCH, "ip", "link", "set", "br0", "up");
        for (int i = 0; i < names.length; i++) {
            String ns = PREFIX + names[i];
            String port = "p-" + names[i];
            ensure("ip", "netns", "add", ns);
            ensure("ip", "netns", "exec", SWITCH, "ip", "link", "add", port, "type", "veth", "peer", "name", "eth0",
                "netns", ns);
            ensure("ip", "netns", "exec", SWITCH, "ip", "link", "set", port, "master", "br0");
            ensure("ip", "netns", "exec", SWITCH, "ip", "link", "set", port, "up");
            ensure("ip", "netns", "exec", ns, "ip", "addr", "add", SUBNET + (i + 1) + "/24", "brd", "+", "dev", "eth0");
            ensure("ip", "netns", "exec", ns, "ip", "link", "set", "eth0", "up");
            ensure("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
        }
    }

    /**
     * Gives host {@code names[index]} its address again without a broadcast address ({@code ip addr add
     * 10.231.0.N/24 dev eth0}, as containers and scripts often do), or with one ({@code brd +}) to restore it.
     */
    public static void readdress(String host, int index, boolean broadcast) throws IOException {
        String ns = PREFIX + host;
        String cidr = SUBNET + (index + 1) + "/24";
        ensure("ip", "netns", "exec", ns, "ip", "addr", "del", cidr, "dev", "eth0");
        if (broadcast) {
            ensure("ip", "netns", "exec", ns, "ip", "addr", "add", cidr, "brd", "+", "dev", "eth0");
        } else {
            ensure("ip", "netns", "exec", ns, "ip", "addr", "add", cidr, "dev", "eth0");
        }
    }

    public static final String SUBNET6 = "fd31::";

    /** Adds {@code fd31::N/64} to host {@code names[index]}'s eth0 (no duplicate detection, so usable at once). */
    public static void addIpv6(String host, int index) throws IOException {
        ensure("ip", "netns", "exec", PREFIX + host, "ip", "-6", "addr", "add", address6(index) + "/64", "dev",
            "eth0", "nodad");
    }

    public static void removeIpv6(String host, int index) throws IOException {
        run("ip", "netns", "exec", PREFIX + host, "ip", "-6", "addr", "del", address6(index) + "/64", "dev", "eth0");
    }

    public static String address6(int index) {
        return SUBNET6 + (index + 1);
    }

    /**
     * Deletes the namespaces of this JVM (the switch and every host: their names start with {@link #PREFIX}) and
     * those a run whose JVM is gone left behind.
     */
    public static void destroy() throws IOException {
        Result list = run("ip", "netns", "list");
        for (String line : list.output.split("\n")) {
            String name = line.trim().split("\\s+")[0];
            java.util.regex.Matcher m = ANY_RUN.matcher(name);
            boolean orphan = !name.startsWith(PREFIX) && m.matches()
                && ProcessHandle.of(Long.parseLong(m.group(1))).map(h -> !h.isAlive()).orElse(true);
            if (name.startsWith(PREFIX) || orphan) {
                run("ip", "netns", "del", name);
            }
        }
    }

    /** Whether {@code tc ... netem} works in namespace {@code host} (it needs the sch_netem kernel module). */
    public static boolean netemAvailable(String host) throws IOException {
        Result r = run("ip", "netns", "exec", PREFIX + host, "tc", "qdisc", "add", "dev", "eth0", "root", "netem",
            "loss", "1%");
        if (r.code == 0) {
            run("ip", "netns", "exec", PREFIX + host, "tc", "qdisc", "del", "dev", "eth0", "root");
            return true;
        }
        return false;
    }

    public static void netemLoss(String host, int percent) throws IOException {
        ensure("ip", "netns", "exec", PREFIX + host, "tc", "qdisc", "add", "dev", "eth0", "root", "netem", "loss",
            percent + "%");
    }

    public static void netemClear(String host) throws IOException {
        run("ip", "netns", "exec", PREFIX + host, "tc", "qdisc", "del", "dev", "eth0", "root");
    }

    public static String address(int index) {
        return SUBNET + (index + 1);
    }

    private record Result(int code, String output) {
    }

    private static void ensure(String... command) throws IOException {
        Result r = run(command);
        if (r.code != 0) {
            throw new IOException(String.join(" ", command) + " failed (" + r.code + "): " + r.output);
        }
    }

    private static Result run(String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish in 30 s");
            }
            return new Result(p.exitValue(), out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /**
     * A JVM running {@code mainClass} inside a host's namespace, on this JVM's class path, driven by lines on its
     * stdin and read by lines on its stdout; it prints {@code READY} when it can take commands, and ends on
     * {@code quit}.
     */
    public static final class Node implements AutoCloseable {
        public final String host;
        public final Process process;
        private final Writer in;
        private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final List<String> transcript = new ArrayList<>();

        public Node(String host, List<String> jvmOptions, String mainClass, String... args)
                throws IOException, InterruptedException {
            this.host = host;
            List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", PREFIX + host,
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
            cmd.addAll(jvmOptions);
            cmd.add("-cp");
            cmd.add(System.getProperty("java.class.path"));
            cmd.add(mainClass);
            cmd.addAll(List.of(args));
            process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    lines.add("EOF " + e);
                }
                lines.add("EOF");
            }, "netns-" + host);
            reader.setDaemon(true);
            reader.start();
            expect("READY");
        }

        /** Sends {@code command} and returns the first output line starting with {@code prefix}. */
        public String call(String command, String prefix) throws IOException, InterruptedException {
            in.write(command + "\n");
            in.flush();
            return expect(prefix);
        }

        public String expect(String prefix) throws IOException, InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                long left = deadline - System.nanoTime();
                String line = left <= 0 ? null : lines.poll(left, TimeUnit.NANOSECONDS);
                if (line == null) {
                    throw new IOException(host + ": no '" + prefix + "' in 60 s; output so far: " + transcript);
                }
                transcript.add(line);
                if (line.startsWith(prefix)) {
                    return line;
                }
                if (line.startsWith("EOF")) {
                    throw new IOException(host + ": exited before '" + prefix + "'; output: " + transcript);
                }
            }
        }

        /** Kills the JVM at once, as a crash would: no withdrawal is sent. */
        public void crash() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }

        @Override
        public void close() throws InterruptedException {
            if (!process.isAlive()) {
                return;
            }
            try {
                in.write("quit\n");
                in.flush();
            } catch (IOException e) {
                // already gone
            }
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(20, TimeUnit.SECONDS);
            }
        }
    }
}
