package io.rdmanio.core.fabric.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.Fabrics;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The shm directory is verified before use: a directory another user made first (a squatter), a symbolic link, a
 * mode wider than 0700, or a parent others can write without the sticky bit is refused, with a message naming the
 * path, what was found and the fix; nothing is created or used in it.
 */
class ShmDirectoryTest {

    private Path base;

    @BeforeEach
    void open() throws IOException {
        base = ShmTestSupport.newDirectory();
    }

    @AfterEach
    void close() throws IOException {
        ShmTestSupport.deleteDirectory(base);
    }

    private static IOException refused(Path dir) {
        IOException e = assertThrows(IOException.class,
            () -> Fabrics.open("shm", Map.of(ShmFabricProvider.DIR, dir.toString())).close());
        String reason = new ShmFabricProvider().unavailableReason(Map.of(ShmFabricProvider.DIR, dir.toString()));
        assertNotNull(reason, "the provider says it is unavailable");
        assertTrue(e.getMessage().contains(reason), e.getMessage() + " / " + reason);
        assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("rdmanio.shm.dir"), "names the fix: " + e.getMessage());
        System.out.println(e.getMessage());
        return e;
    }

    @Test
    void aSymbolicLinkToAGoodDirectoryIsRefusedAndNotFollowed() throws IOException {
        Path real = base.resolve("real");
        Files.createDirectory(real, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path link = Files.createSymbolicLink(Path.of(base + "-l"), real);
        try {
            IOException e = refused(link);
            assertTrue(e.getMessage().contains("symbolic link (to " + real + ")"), e.getMessage());
            try (var entries = Files.list(real)) {
                assertEquals(0, entries.count(), "nothing was created through the link");
            }
        } finally {
            Files.deleteIfExists(link);
        }
    }

    @Test
    void ourOwnDirectoryOpenToOthersIsRefused() throws IOException {
        Path dir = base.resolve("wide");
        Files.createDirectory(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        IOException e = refused(dir);
        assertTrue(e.getMessage().contains("mode 0777, expected exactly 0700"), e.getMessage());
        assertTrue(e.getMessage().contains("chmod 0700 " + dir), e.getMessage());
    }

    @Test
    void aDirectoryOthersCanRenameAwayIsRefused() throws IOException {
        Path open = base.resolve("open");
        Files.createDirectory(open);
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path dir = open.resolve("d");
        IOException e = refused(dir);
        assertTrue(e.getMessage().contains("lies in " + open) && e.getMessage().contains("sticky"), e.getMessage());
        assertTrue(!Files.exists(dir), "nothing was created there");
        // With the sticky bit (as /dev/shm and /tmp have), no one else can rename it: accepted.
        Files.setAttribute(open, "unix:mode", 01777);
        Fabrics.open("shm", Map.of(ShmFabricProvider.DIR, dir.toString())).close();
        assertEquals("rwx------", PosixFilePermissions.toString(
            Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS)));
    }

    @Test
    void aDirectoryAnotherUserMadeFirstIsRefusedNamingItsOwner() throws Exception {
        Assumptions.assumeTrue(ShmHost.uid() == 0 && Files.isExecutable(Path.of("/usr/sbin/useradd"))
            && Files.isExecutable(Path.of("/usr/bin/setpriv")),
            "needs root, useradd and setpriv to create another user who squats the directory");
        String user = "rdmsq" + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 20), 36);
        Path dir = Path.of("/dev/shm/rdmanio-sq-" + user);
        try {
            run("/usr/sbin/useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user);
            int uid = ShmHost.uidOfUserName(user);
            assertTrue(uid > 0, "useradd made " + user);
            // The other user creates the victim's directory first, open to all, as in a squatting attack.
            run("/usr/bin/setpriv", "--reuid=" + user, "--regid=" + user, "--clear-groups", "/bin/mkdir", "-m",
                "0777", dir.toString());
            assertEquals(uid, Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS));
            IOException e = refused(dir);
            assertTrue(e.getMessage().contains("owned by uid " + uid + " (" + user + ")"), e.getMessage());
            assertTrue(e.getMessage().contains("mode 0777"), e.getMessage());
            assertTrue(e.getMessage().contains("remove it"), e.getMessage());
            try (var entries = Files.list(dir)) {
                assertEquals(0, entries.count(), "the victim put nothing in the squatted directory");
            }
        } finally {
            Files.deleteIfExists(dir);
            run("/usr/sbin/userdel", user);
        }
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), String.join(" ", command) + " did not finish");
        if (p.exitValue() != 0 && !command[0].endsWith("userdel")) {
            throw new IOException(String.join(" ", command) + " failed with " + p.exitValue() + ": " + output);
        }
    }
}
