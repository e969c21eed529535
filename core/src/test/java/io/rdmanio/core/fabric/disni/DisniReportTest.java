package io.rdmanio.core.fabric.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The doctor's RDMA section read from fake sysfs and procfs trees. */
class DisniReportTest {

    private static final String LIMITS_HEADER =
        "Limit                     Soft Limit           Hard Limit           Units     \n";
    private static final String VERSIONS = "rdma-core 44.0-2\nlibibverbs1 44.0-2\nlibrdmacm1 44.0-2\n";

    private int problems;

    private String report(Path root, String libraryProblem, String versions, boolean capIpcLock) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        problems = new DisniReport(root, () -> libraryProblem, () -> versions, () -> capIpcLock)
            .print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    private static void write(Path root, String relative, String content) throws IOException {
        Path p = root.resolve(relative);
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
    }

    private static void limits(Path root, String memlock) throws IOException {
        write(root, "proc/self/limits", LIMITS_HEADER
            + "Max open files            1024                 1048576              files     \n"
            + "Max locked memory         " + memlock + "             " + memlock + "             bytes     \n");
    }

    private static void port(Path root, String device, String state, String phys, String... gids) throws IOException {
        String p = "sys/class/infiniband/" + device + "/ports/1/";
        write(root, p + "state", state + "\n");
        write(root, p + "phys_state", phys + "\n");
        write(root, p + "link_layer", "Ethernet\n");
        for (int i = 0; i < gids.length; i++) {
            write(root, p + "gids/" + i, gids[i] + "\n");
            if (!gids[i].equals("0000:0000:0000:0000:0000:0000:0000:0000")) {
                write(root, p + "gid_attrs/types/" + i, "RoCE v2\n");
                write(root, p + "gid_attrs/ndevs/" + i, "eth0\n");
            }
        }
    }

    @Test
    void healthySoftRoceDevice(@TempDir Path root) throws Exception {
        port(root, "rxe0", "4: ACTIVE", "5: LinkUp", "fe80:0000:0000:0000:5054:00ff:fe12:3456",
            "0000:0000:0000:0000:0000:ffff:0a00:020f", "0000:0000:0000:0000:0000:0000:0000:0000");
        write(root, "sys/class/infiniband/rxe0/node_type", "1: CA\n");
        limits(root, "unlimited");
        String out = report(root, null, VERSIONS, false);
        assertEquals(0, problems, out);
        assertTrue(out.contains("rdma device rxe0: 1 port(s), node_type 1: CA\n"), out);
        assertTrue(out.contains("  port 1: state 4: ACTIVE, phys_state 5: LinkUp, link_layer Ethernet\n"), out);
        assertTrue(out.contains("    gid 0: fe80:0000:0000:0000:5054:00ff:fe12:3456 RoCE v2 on eth0\n"), out);
        assertTrue(out.contains("    gid 1: 0000:0000:0000:0000:0000:ffff:0a00:020f RoCE v2 on eth0\n"), out);
        assertFalse(out.contains("gid 2:"), "an all-zero GID is an unused slot: " + out);
        assertTrue(out.contains("memlock limit: unlimited\n"), out);
        assertTrue(out.contains("libdisni: loads\n"), out);
        assertTrue(out.contains("rdma-core package libibverbs1: 44.0-2\n"), out);
        assertTrue(out.contains("rdma: no problems found\n"), out);
    }

    @Test
    void noDeviceLowMemlockMissingLibraryAndPackage(@TempDir Path root) throws Exception {
        limits(root, "8388608");
        String out = report(root, "libibverbs.so.1: cannot open shared object file (install libibverbs1)",
            "rdma-core\nlibibverbs1 44.0-2\nlibrdmacm1 44.0-2\n", false);
        assertEquals(4, problems, out);
        assertTrue(out.contains("rdma devices: none"), out);
        assertTrue(out.contains("rdma PROBLEM: no RDMA device: install rdma-core"), out);
        assertTrue(out.contains("modprobe rdma_rxe"), out);
        assertTrue(out.contains("memlock limit: 8192 KiB\n"), out);
        assertTrue(out.contains("rdma PROBLEM: the locked-memory limit is 8192 KiB, below the 64 MiB"), out);
        assertTrue(out.contains("ulimit -l unlimited"), out);
        assertTrue(out.contains("rdma PROBLEM: libdisni does not load: libibverbs.so.1: cannot open"), out);
        assertTrue(out.contains("rdma-core package rdma-core: not installed\n"), out);
        assertTrue(out.contains("rdma PROBLEM: package rdma-core is not installed: `apt install rdma-core`"), out);
    }

    @Test
    void portDownWithoutGidsAndLimitBypassedByCapability(@TempDir Path root) throws Exception {
        port(root, "mlx5_0", "1: DOWN", "3: Disabled", "0000:0000:0000:0000:0000:0000:0000:0000");
        limits(root, "65536");
        String out = report(root, null, null, true);
        assertEquals(2, problems, out);
        assertTrue(out.contains("rdma PROBLEM: device mlx5_0 port 1 is 1: DOWN, not ACTIVE: bring its link up"), out);
        assertTrue(out.contains("ibv_devinfo -d mlx5_0"), out);
        assertTrue(out.contains("rdma PROBLEM: device mlx5_0 port 1 has no GID: RoCE takes its GIDs from the IP "
            + "addresses"), out);
        assertTrue(out.contains("memlock limit: 64 KiB (CAP_IPC_LOCK held: the limit does not apply)\n"), out);
        assertFalse(out.contains("locked-memory limit is"), out);
        assertTrue(out.contains("rdma-core packages: unknown (no dpkg-query here"), out);
    }
}
