package io.rdmanio.core.fabric.disni;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What the machine offers the disni fabric, read from sysfs and procfs without native code: the RDMA devices, the
 * network interfaces they sit on, their addresses, and the memory-lock limit.
 *
 * <p>Stateless and thread-safe; every method reads the files afresh (never on the data path).
 */
public final class DisniDevices {

    /** Where the kernel lists RDMA devices (one directory per device). */
    static final Path SYSFS_DEVICES = Path.of("/sys/class/infiniband");
    static final Path SYSFS_NET = Path.of("/sys/class/net");
    static final Path PROC_LIMITS = Path.of("/proc/self/limits");
    static final Path PROC_STATUS = Path.of("/proc/self/status");

    /** The memory-lock limit below which the fabric refuses to open: the engine registers 4 MiB pool chunks. */
    public static final long MIN_MEMLOCK_BYTES = 64L << 20;
    /** CAP_IPC_LOCK lifts the memory-lock limit for registration. */
    private static final int CAP_IPC_LOCK = 14;

    public static final String NO_DEVICE = "no RDMA device was found (check `ibv_devices`/`rdma link`; soft-RoCE: "
        + "`rdma link add rxe0 type rxe netdev eth0`)";

    private DisniDevices() {
    }

    /** The names of the RDMA devices (e.g. {@code mlx5_0}, {@code rxe0}), sorted; empty when there are none. */
    public static List<String> devices() {
        List<String> names = new ArrayList<>();
        if (!Files.isDirectory(SYSFS_DEVICES)) {
            return names;
        }
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(SYSFS_DEVICES)) {
            for (Path p : dir) {
                names.add(p.getFileName().toString());
            }
        } catch (IOException e) {
            return names;
        }
        names.sort(null);
        return names;
    }

    /**
     * The network interfaces an RDMA device carries traffic for: RoCE and iWARP ports name theirs in
     * {@code ports/N/gid_attrs/ndevs}, and an IPoIB or RoCE netdev links back to its device under
     * {@code device/infiniband}.
     */
    public static Set<String> netdevs(String device) {
        Set<String> names = new LinkedHashSet<>();
        Path ports = SYSFS_DEVICES.resolve(device).resolve("ports");
        if (Files.isDirectory(ports)) {
            try (DirectoryStream<Path> dir = Files.newDirectoryStream(ports)) {
                for (Path port : dir) {
                    Path ndevs = port.resolve("gid_attrs").resolve("ndevs");
                    if (!Files.isDirectory(ndevs)) {
                        continue;
                    }
                    try (DirectoryStream<Path> entries = Files.newDirectoryStream(ndevs)) {
                        for (Path entry : entries) {
                            String name = readFirstLine(entry);
                            if (name != null && !name.isEmpty()) {
                                names.add(name);
                            }
                        }
                    } catch (IOException ignored) {
                        // unreadable gid entries (unused GIDs give EINVAL) are skipped
                    }
                }
            } catch (IOException ignored) {
                // no ports directory to read: fall through to the netdev side
            }
        }
        if (Files.isDirectory(SYSFS_NET)) {
            try (DirectoryStream<Path> dir = Files.newDirectoryStream(SYSFS_NET)) {
                for (Path net : dir) {
                    if (Files.isDirectory(net.resolve("device").resolve("infiniband").resolve(device))) {
                        names.add(net.getFileName().toString());
                    }
                }
            } catch (IOException ignored) {
                // nothing more to find
            }
        }
        return names;
    }

    /**
     * The first IPv4 address (else any address) of a network interface that an RDMA device serves, or
     * {@code null} when no device has an addressed interface.
     */
    public static InetAddress deviceAddress() {
        InetAddress fallback = null;
        for (String device : devices()) {
            for (String netdev : netdevs(device)) {
                try {
                    NetworkInterface nif = NetworkInterface.getByName(netdev);
                    if (nif == null || !nif.isUp()) {
                        continue;
                    }
                    for (Enumeration<InetAddress> e = nif.getInetAddresses(); e.hasMoreElements();) {
                        InetAddress a = e.nextElement();
                        if (a instanceof Inet4Address) {
                            return a;
                        }
                        if (fallback == null && !a.isLinkLocalAddress()) {
                            fallback = a;
                        }
                    }
                } catch (SocketException ignored) {
                    // an interface that vanished is skipped
                }
            }
        }
        return fallback;
    }

    /** The RLIMIT_MEMLOCK soft limit in bytes, {@link Long#MAX_VALUE} for unlimited, -1 if unknown. */
    public static long memlockLimit() {
        try {
            for (String line : Files.readAllLines(PROC_LIMITS, StandardCharsets.US_ASCII)) {
                if (line.startsWith("Max locked memory")) {
                    String[] f = line.substring("Max locked memory".length()).trim().split("\\s+");
                    return "unlimited".equals(f[0]) ? Long.MAX_VALUE : Long.parseLong(f[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /** Whether the process holds CAP_IPC_LOCK, with which registration ignores the memory-lock limit. */
    public static boolean canLockWithoutLimit() {
        try {
            for (String line : Files.readAllLines(PROC_STATUS, StandardCharsets.US_ASCII)) {
                if (line.startsWith("CapEff:")) {
                    long caps = Long.parseUnsignedLong(line.substring("CapEff:".length()).trim(), 16);
                    return (caps & (1L << CAP_IPC_LOCK)) != 0;
                }
            }
        } catch (IOException | RuntimeException e) {
            return false;
        }
        return false;
    }

    /** {@code null} if the memory-lock limit allows registering the engine's memory, else the cause and fix. */
    public static String memlockProblem() {
        long limit = memlockLimit();
        if (limit < 0 || limit >= MIN_MEMLOCK_BYTES || canLockWithoutLimit()) {
            return null;
        }
        return "the locked-memory limit (ulimit -l) is " + (limit >> 10) + " KiB, below the "
            + (MIN_MEMLOCK_BYTES >> 20) + " MiB that registering RDMA memory needs: raise it (`ulimit -l unlimited`, "
            + "`* - memlock unlimited` in /etc/security/limits.conf, or LimitMEMLOCK=infinity for a systemd service)";
    }

    /**
     * Receiver-not-ready NAKs a device has counted since it appeared (sent plus received), from the port's
     * hardware counters; -1 when the device exposes none.
     */
    public static long receiverNotReadyNaks(String device) {
        Path ports = SYSFS_DEVICES.resolve(device).resolve("ports");
        long total = -1;
        if (!Files.isDirectory(ports)) {
            return total;
        }
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(ports)) {
            for (Path port : dir) {
                for (String counter : new String[] {"rcvd_rnr_err", "send_rnr_err", "rnr_nak_retry_err"}) {
                    String v = readFirstLine(port.resolve("hw_counters").resolve(counter));
                    if (v != null) {
                        total = Math.max(total, 0) + Long.parseLong(v.trim());
                    }
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return total;
    }

    private static String readFirstLine(Path p) {
        try {
            List<String> lines = Files.readAllLines(p, StandardCharsets.US_ASCII);
            return lines.isEmpty() ? null : lines.get(0).trim();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
