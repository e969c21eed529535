package io.rdmanio.core.fabric.disni;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The RDMA section of {@code ./rdmanio doctor}: devices, ports, link state and GIDs from sysfs, the memory-lock
 * limit, whether libdisni loads, and the installed rdma-core packages, each problem followed by its fix.
 *
 * <p>Every file is read below a root directory ({@code /} on a real machine) so that tests can hand it a fake
 * sysfs and procfs tree. Not thread-safe; one report per call.
 */
public final class DisniReport {

    /** The rdma-core packages whose versions are reported (Debian names). */
    static final List<String> PACKAGES = List.of("rdma-core", "libibverbs1", "librdmacm1");

    private static final String ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000";
    private static final String NO_DEVICE_FIX = "install rdma-core (Debian: `apt install rdma-core ibverbs-providers "
        + "librdmacm1`) and the NIC's driver; check with `rdma link`; for soft-RoCE on an Ethernet interface: "
        + "`modprobe rdma_rxe && rdma link add rxe0 type rxe netdev ETH`";

    private final Path root;
    private final Supplier<String> libraryProblem;
    private final Supplier<String> packageVersions;
    private final BooleanSupplier lockWithoutLimit;

    /**
     * @param root            the directory holding {@code sys/class/infiniband} and {@code proc/self/limits}
     * @param libraryProblem  why libdisni does not load, {@code null} when it loads
     * @param packageVersions the installed versions of {@link #PACKAGES}, one per line, {@code null} if unknown
     * @param lockWithoutLimit whether the process may lock memory regardless of the limit (CAP_IPC_LOCK)
     */
    DisniReport(Path root, Supplier<String> libraryProblem, Supplier<String> packageVersions,
               BooleanSupplier lockWithoutLimit) {
        this.root = root;
        this.libraryProblem = libraryProblem;
        this.packageVersions = packageVersions;
        this.lockWithoutLimit = lockWithoutLimit;
    }

    /** The report for this machine and process. */
    public static DisniReport system() {
        return new DisniReport(Path.of("/"), DisniFabricProvider::libraryProblem, DisniReport::dpkgVersions,
            DisniDevices::canLockWithoutLimit);
    }

    /**
     * Prints the section to {@code out}.
     *
     * @return the number of problems found
     */
    int print(PrintStream out) {
        List<String> problems = new ArrayList<>();
        List<String> devices = list(root.resolve("sys/class/infiniband"));
        if (devices.isEmpty()) {
            out.println("rdma devices: none (" + root.resolve("sys/class/infiniband") + " is empty or missing)");
            problems.add("no RDMA device: " + NO_DEVICE_FIX);
        }
        for (String device : devices) {
            printDevice(device, out, problems);
        }
        printMemlock(out, problems);
        String library = libraryProblem.get();
        out.println("libdisni: " + (library == null ? "loads" : "does not load: " + library));
        if (library != null) {
            problems.add("libdisni does not load: " + library);
        }
        String versions = packageVersions.get();
        if (versions == null) {
            out.println("rdma-core packages: unknown (no dpkg-query here; try `rpm -q rdma-core libibverbs librdmacm`)");
        } else {
            for (String line : versions.strip().split("\n")) {
                String[] f = line.strip().split("\\s+", 2);
                boolean missing = f.length < 2 || f[1].isBlank();
                out.println("rdma-core package " + f[0] + ": " + (missing ? "not installed" : f[1]));
                if (missing && !f[0].isEmpty()) {
                    problems.add("package " + f[0] + " is not installed: `apt install " + f[0] + "`");
                }
            }
        }
        if (problems.isEmpty()) {
            out.println("rdma: no problems found");
        }
        for (String p : problems) {
            out.println("rdma PROBLEM: " + p);
        }
        return problems.size();
    }

    private void printDevice(String device, PrintStream out, List<String> problems) {
        Path dir = root.resolve("sys/class/infiniband").resolve(device);
        List<String> ports = list(dir.resolve("ports"));
        out.println("rdma device " + device + ": " + ports.size() + " port(s)"
            + optional(", node_type ", read(dir.resolve("node_type"))));
        if (ports.isEmpty()) {
            problems.add("device " + device + " has no ports: reload its driver (`rdma link` shows its state)");
        }
        for (String port : ports) {
            Path p = dir.resolve("ports").resolve(port);
            String state = read(p.resolve("state"));
            String phys = read(p.resolve("phys_state"));
            String layer = read(p.resolve("link_layer"));
            out.println("  port " + port + ": state " + orUnknown(state) + ", phys_state " + orUnknown(phys)
                + ", link_layer " + orUnknown(layer));
            String where = "device " + device + " port " + port;
            if (state == null || !state.contains("ACTIVE")) {
                problems.add(where + " is " + orUnknown(state) + ", not ACTIVE: bring its link up (Ethernet: `ip link "
                    + "set ETH up` on the interface it serves; InfiniBand: a subnet manager must run, e.g. opensm) "
                    + "and check `ibv_devinfo -d " + device + "`");
            } else if (phys != null && !phys.contains("LinkUp")) {
                problems.add(where + " has phys_state " + phys + ": check the cable or the interface it serves");
            }
            int used = 0;
            for (String index : sorted(list(p.resolve("gids")))) {
                String gid = read(p.resolve("gids").resolve(index));
                if (gid == null || gid.equals(ZERO_GID)) {
                    continue;
                }
                used++;
                out.println("    gid " + index + ": " + gid
                    + optional(" ", read(p.resolve("gid_attrs/types").resolve(index)))
                    + optional(" on ", read(p.resolve("gid_attrs/ndevs").resolve(index))));
            }
            if (used == 0) {
                problems.add(where + " has no GID"
                    + ("Ethernet".equals(layer) ? ": RoCE takes its GIDs from the IP addresses of its Ethernet "
                    + "interface; give that interface an address (`ip addr add ADDR/LEN dev ETH`)"
                    : ": the port has no address yet; check the link and, on InfiniBand, the subnet manager"));
            }
        }
    }

    private void printMemlock(PrintStream out, List<String> problems) {
        long limit = -1;
        String text = "unknown";
        try {
            for (String line : Files.readAllLines(root.resolve("proc/self/limits"), StandardCharsets.US_ASCII)) {
                if (line.startsWith("Max locked memory")) {
                    String[] f = line.substring("Max locked memory".length()).trim().split("\\s+");
                    limit = "unlimited".equals(f[0]) ? Long.MAX_VALUE : Long.parseLong(f[0]);
                    text = limit == Long.MAX_VALUE ? "unlimited" : (limit >> 10) + " KiB";
                }
            }
        } catch (IOException | RuntimeException e) {
            text = "unknown (" + e.getMessage() + ")";
        }
        boolean bypass = lockWithoutLimit.getAsBoolean();
        out.println("memlock limit: " + text + (bypass ? " (CAP_IPC_LOCK held: the limit does not apply)" : ""));
        if (limit >= 0 && limit < DisniDevices.MIN_MEMLOCK_BYTES && !bypass) {
            problems.add("the locked-memory limit is " + text + ", below the " + (DisniDevices.MIN_MEMLOCK_BYTES >> 20)
                + " MiB that registering RDMA memory needs: `ulimit -l unlimited`, `* - memlock unlimited` in "
                + "/etc/security/limits.conf, or LimitMEMLOCK=infinity for a systemd service");
        }
    }

    /** {@code dpkg-query}'s versions of {@link #PACKAGES}, {@code null} when it cannot run. */
    static String dpkgVersions() {
        List<String> cmd = new ArrayList<>(List.of("dpkg-query", "-W", "-f", "${Package} ${Version}\\n"));
        cmd.addAll(PACKAGES);
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getOutputStream().close();
            byte[] bytes;
            try (InputStream in = p.getInputStream()) {
                bytes = in.readAllBytes();
            }
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            // dpkg-query exits 1 when a package is unknown, and says so on the merged stream: keep the known ones
            // and name the others as not installed.
            StringBuilder lines = new StringBuilder();
            String output = new String(bytes, StandardCharsets.UTF_8);
            for (String name : PACKAGES) {
                String found = null;
                for (String line : output.split("\n")) {
                    if (line.startsWith(name + " ")) {
                        found = line.strip();
                    }
                }
                lines.append(found == null ? name : found).append('\n');
            }
            return lines.toString();
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private static List<String> list(Path dir) {
        List<String> names = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return names;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path e : entries) {
                names.add(e.getFileName().toString());
            }
        } catch (IOException e) {
            return names;
        }
        names.sort(null);
        return names;
    }

    /** Numeric names in numeric order (GID indexes), others after them. */
    private static List<String> sorted(List<String> names) {
        names.sort((a, b) -> {
            boolean na = a.chars().allMatch(Character::isDigit);
            boolean nb = b.chars().allMatch(Character::isDigit);
            if (na && nb) {
                return Long.compare(Long.parseLong(a), Long.parseLong(b));
            }
            return na ? -1 : nb ? 1 : a.compareTo(b);
        });
        return names;
    }

    /** The file's first line, trimmed; {@code null} when it cannot be read (sysfs answers EINVAL for unset GIDs). */
    private static String read(Path file) {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.US_ASCII);
            return lines.isEmpty() ? null : lines.get(0).strip();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String optional(String prefix, String value) {
        return value == null || value.isEmpty() ? "" : prefix + value;
    }

    private static String orUnknown(String value) {
        return value == null ? "unknown" : value;
    }
}
