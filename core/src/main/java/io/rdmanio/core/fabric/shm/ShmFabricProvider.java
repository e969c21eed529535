package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.FabricProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Set;

/**
 * The {@code shm} fabric: processes of one user on one Linux host.
 *
 * <p>Settings (keys without the {@code rdmanio.} prefix):
 * <ul>
 *   <li>{@value #DIR}: the shared directory (system property {@code rdmanio.shm.dir}; default
 *       {@code /dev/shm/rdmanio-UID}). Created 0700 if missing; it must be a directory this user owns and can
 *       write, on one host's tmpfs ideally, with a path short enough for UNIX socket names.</li>
 *   <li>{@value #GROUP}: a group name; files are then created 0660 and directories 0770 owned by that group.</li>
 * </ul>
 */
public final class ShmFabricProvider implements FabricProvider {

    public static final String NAME = "shm";
    public static final String DIR = "shm.dir";
    public static final String GROUP = "shm.group";
    /** A UNIX socket path holds 107 bytes; the longest rendezvous name under the directory takes 58. */
    static final int MAX_DIR_LENGTH = 107 - 58;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String unavailableReason() {
        return unavailableReason(Map.of());
    }

    /** {@code null} when a fabric with {@code settings} can be opened here, else the cause and the fix. */
    @Override
    public String unavailableReason(Map<String, String> settings) {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return "the shm fabric needs Linux (/proc and tmpfs); this is " + System.getProperty("os.name");
        }
        if (!Files.isReadable(ShmHost.BOOT_ID)) {
            return "cannot read " + ShmHost.BOOT_ID + " (the host identity peers compare): mount /proc";
        }
        try {
            Path dir = directory(settings);
            if (Files.exists(dir)) {
                ensureDirectory(dir, null);
            } else {
                // Checked without creating it: a check has no side effect; open creates it.
                checkLength(dir);
                Path parent = dir.getParent();
                while (parent != null && !Files.exists(parent)) {
                    parent = parent.getParent();
                }
                if (parent == null || !Files.isWritable(parent) || !Files.isExecutable(parent)) {
                    return "cannot create the shm directory " + dir + ": " + parent + " is not writable by this"
                        + " user" + FIX;
                }
            }
        } catch (IOException e) {
            return e.getMessage();
        }
        return null;
    }

    @Override
    public Fabric open(Map<String, String> settings) throws IOException {
        Map<String, String> s = settings == null ? Map.of() : settings;
        String reason = unavailableReason(s);
        if (reason != null) {
            throw new IOException("fabric 'shm' is unavailable: " + reason);
        }
        GroupPrincipal group = null;
        String groupName = s.get(GROUP);
        if (groupName != null && !groupName.isBlank()) {
            try {
                group = Path.of("/").getFileSystem().getUserPrincipalLookupService()
                    .lookupPrincipalByGroupName(groupName.trim());
            } catch (IOException e) {
                throw new IOException("rdmanio." + GROUP + " names no group of this host: '" + groupName.trim()
                    + "'", e);
            }
        }
        Path dir = directory(s);
        ensureDirectory(dir, group);
        return new ShmFabric(dir, group);
    }

    static Path directory(Map<String, String> settings) throws IOException {
        String configured = settings.get(DIR);
        if (configured == null || configured.isBlank()) {
            configured = System.getProperty("rdmanio." + DIR);
        }
        if (configured == null || configured.isBlank()) {
            configured = "/dev/shm/rdmanio-" + ShmHost.uid();
        }
        return Path.of(configured.trim()).toAbsolutePath().normalize();
    }

    /** Creates the directory if missing and checks it is usable; the exception names the cause and the fix. */
    private static final String FIX =
        " (set rdmanio.shm.dir to a directory of your own, ideally on tmpfs such as /dev/shm)";

    private static void checkLength(Path dir) throws IOException {
        if (dir.toString().length() > MAX_DIR_LENGTH) {
            throw new IOException("the shm directory path " + dir + " is " + dir.toString().length()
                + " characters long; UNIX socket names under it allow " + MAX_DIR_LENGTH + " at most" + FIX);
        }
    }

    static void ensureDirectory(Path dir, GroupPrincipal group) throws IOException {
        String fix = FIX;
        checkLength(dir);
        if (!Files.exists(dir)) {
            Set<PosixFilePermission> mode = PosixFilePermissions.fromString(group == null ? "rwx------" : "rwxrwx---");
            try {
                Files.createDirectories(dir);
                Files.setPosixFilePermissions(dir, mode);
            } catch (IOException e) {
                if (!Files.isDirectory(dir)) {
                    throw new IOException("cannot create the shm directory " + dir + ": " + e + fix, e);
                }
            }
        }
        if (!Files.isDirectory(dir)) {
            throw new IOException("the shm directory " + dir + " is not a directory" + fix);
        }
        if (!Files.isWritable(dir) || !Files.isExecutable(dir)) {
            throw new IOException("the shm directory " + dir + " is not writable by this user" + fix);
        }
        if (group != null) {
            Files.setAttribute(dir, "posix:group", group);
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwx---"));
        }
    }
}
