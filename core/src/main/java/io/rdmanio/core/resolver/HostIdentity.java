package io.rdmanio.core.resolver;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

/**
 * What makes two processes able to share memory through the shm fabric: the same running kernel (its boot id) and
 * the same shm directory (device and inode). Network namespaces on one host share both, so they match; two
 * containers with their own {@code /dev/shm} do not.
 *
 * @param bootId    the kernel boot id
 * @param shmDirDev device of the shm directory
 * @param shmDirIno inode of the shm directory
 */
public record HostIdentity(UUID bootId, long shmDirDev, long shmDirIno) {

    static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");

    /**
     * This host's identity for the shm directory in {@code rdmanio.shm.dir} (default {@code /dev/shm/rdmanio-UID},
     * as the shm fabric), or {@code null} when it cannot be read (not Linux, no {@code /proc}, no directory yet).
     */
    public static HostIdentity local() {
        try {
            UUID boot = UUID.fromString(Files.readString(BOOT_ID, StandardCharsets.US_ASCII).trim());
            Path dir = shmDirectory();
            if (!Files.isDirectory(dir)) {
                return null;
            }
            return new HostIdentity(boot, (Long) Files.getAttribute(dir, "unix:dev"),
                (Long) Files.getAttribute(dir, "unix:ino"));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    static Path shmDirectory() throws IOException {
        String configured = System.getProperty("rdmanio.shm.dir");
        if (configured == null || configured.isBlank()) {
            configured = "/dev/shm/rdmanio-" + Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        }
        return Path.of(configured.trim()).toAbsolutePath().normalize();
    }

    @Override
    public String toString() {
        return "host[boot " + bootId + ", shm dir " + shmDirDev + ":" + shmDirIno + "]";
    }
}
