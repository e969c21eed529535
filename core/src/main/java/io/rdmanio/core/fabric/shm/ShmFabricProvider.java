package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.FabricProvider;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

/**
 * The {@code shm} fabric: processes of one user on one Linux host.
 *
 * <p>Settings (keys without the {@code rdmanio.} prefix):
 * <ul>
 *   <li>{@value #DIR}: the shared directory (system property {@code rdmanio.shm.dir}; default
 *       {@code /dev/shm/rdmanio-UID}). Created 0700 if missing; it must be a real directory (never a symbolic
 *       link) this user owns, of mode exactly 0700 (0770 with a group), in directories no other user can rename it
 *       out of, on one host's tmpfs ideally, with a path short enough for UNIX socket names; anything else is
 *       refused naming the path, what was found and the fix.</li>
 *   <li>{@value #GROUP}: a group name; files are then created 0660 and directories 0770 owned by that group.</li>
 *   <li>{@value #WAKEUP_CHANNEL}: {@code true} (the default) or {@code false}: whether a selector waiting for
 *       completions is woken by the peer's ring itself (a wakeup pipe per completion queue, with librdmanio-shm),
 *       or through the fabric's watcher thread.</li>
 * </ul>
 */
public final class ShmFabricProvider implements FabricProvider {

    public static final String NAME = "shm";
    public static final String DIR = "shm.dir";
    public static final String GROUP = "shm.group";
    public static final String WAKEUP_CHANNEL = "shm.wakeupChannel";
    /** A UNIX socket path holds 107 bytes; the longest rendezvous name under the directory takes 58. */
    static final int MAX_DIR_LENGTH = 107 - 58;

    /**
     * {@code null} when this process shares sealed memory that no peer can shrink (and requires it of peers), else
     * why it shares plain files; for {@code doctor}. Loads librdmanio-shm if it was not loaded yet.
     */
    public static String sealedMemoryProblem() {
        return ShmNatives.unavailableReason();
    }

    @Override
    public String name() {
        return NAME;
    }

    /** Whether this process shares sealed memory (no peer can shrink what it maps) or plain files, and why. */
    @Override
    public int report(PrintStream out) {
        String sealed = sealedMemoryProblem();
        out.println("shm memory: " + (sealed == null ? "sealed memfds (no peer can shrink what this process maps)"
                : "plain files, which a peer could shrink: " + sealed));
        return 0;
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
            if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                verifyDirectory(dir, group(settings));
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
                verifyAncestors(dir, parent);
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
        GroupPrincipal group = group(s);
        Path dir = directory(s);
        ensureDirectory(dir, group);
        return new ShmFabric(dir, group, wakeupChannel(s));
    }

    /** The setting {@value #WAKEUP_CHANNEL}: true unless set to false. */
    static boolean wakeupChannel(Map<String, String> settings) throws IOException {
        String v = settings.get(WAKEUP_CHANNEL);
        if (v == null || v.isBlank() || v.trim().equals("true")) {
            return true;
        }
        if (v.trim().equals("false")) {
            return false;
        }
        throw new IOException("rdmanio." + WAKEUP_CHANNEL + " must be true or false: '" + v + "'");
    }

    /** The group of {@value #GROUP}, or {@code null} when none is set. */
    static GroupPrincipal group(Map<String, String> settings) throws IOException {
        String groupName = settings.get(GROUP);
        if (groupName == null || groupName.isBlank()) {
            return null;
        }
        try {
            return Path.of("/").getFileSystem().getUserPrincipalLookupService()
                .lookupPrincipalByGroupName(groupName.trim());
        } catch (IOException e) {
            throw new IOException("rdmanio." + GROUP + " names no group of this host: '" + groupName.trim() + "'",
                e);
        }
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

    /**
     * Creates the directory if missing (0700, or 0770 owned by {@code group}) and verifies it before any use: it
     * must be a real directory (not a symbolic link, which is never followed), owned by this user, of exactly that
     * mode, and every directory above it must be one that no other user can rename it out of (owned by root or this
     * user, and not writable by others unless sticky, as {@code /dev/shm} and {@code /tmp} are). Anything else was
     * made or can be replaced by someone else, who could then swap listener sockets or hold the bind lock, so it is
     * refused with an exception naming the path, what was found and the fix.
     */
    static void ensureDirectory(Path dir, GroupPrincipal group) throws IOException {
        checkLength(dir);
        Path parent = dir.getParent();
        if (parent == null) {
            throw new IOException("the shm directory cannot be the root directory" + FIX);
        }
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            String mode = group == null ? "rwx------" : "rwxrwx---";
            try {
                Files.createDirectories(parent);
                // Created with no more than the final mode (the umask can only take bits away), so no other user
                // can slip a file in before it is checked.
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(
                    "rwx------")));
                if (group != null) {
                    Files.getFileAttributeView(dir, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                        .setGroup(group);
                }
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(mode));
            } catch (FileAlreadyExistsException e) {
                // made meanwhile, by another process of ours or by someone else: verified below
            } catch (IOException e) {
                if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                    throw new IOException("cannot create the shm directory " + dir + ": " + e + FIX, e);
                }
            }
        } else if (group != null && isOurs(dir)) {
            // Our own 0700 directory, now shared with the group: widened by its owner, nothing else trusted.
            Map<String, Object> a = Files.readAttributes(dir, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            if (((Integer) a.get("mode") & 07777) == 0700) {
                Files.getFileAttributeView(dir, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                    .setGroup(group);
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwx---"));
            }
        }
        verifyDirectory(dir, group);
        if (!Files.isWritable(dir) || !Files.isExecutable(dir)) {
            throw new IOException("the shm directory " + dir + " is not writable by this user" + FIX);
        }
    }

    private static boolean isOurs(Path dir) throws IOException {
        Map<String, Object> a = Files.readAttributes(dir, "unix:uid,isSymbolicLink,isDirectory",
            LinkOption.NOFOLLOW_LINKS);
        return (Integer) a.get("uid") == ShmHost.uid() && !(Boolean) a.get("isSymbolicLink")
            && (Boolean) a.get("isDirectory");
    }

    /** Throws, naming the path, what was found and the fix, unless {@code dir} is fit to use; see ensureDirectory. */
    static void verifyDirectory(Path dir, GroupPrincipal group) throws IOException {
        checkLength(dir);
        int uid = ShmHost.uid();
        Map<String, Object> a = Files.readAttributes(dir, "unix:*", LinkOption.NOFOLLOW_LINKS);
        String remove = " (remove it if you do not know who made it, or set rdmanio.shm.dir to a directory of your"
            + " own, mode 0700, ideally on tmpfs such as /dev/shm)";
        if ((Boolean) a.get("isSymbolicLink")) {
            String target;
            try {
                target = Files.readSymbolicLink(dir).toString();
            } catch (IOException e) {
                target = "?";
            }
            throw new IOException("the shm directory " + dir + " is a symbolic link (to " + target + "), which the"
                + " shm fabric never follows: whoever can change the link chooses where listener sockets go" + remove);
        }
        if (!(Boolean) a.get("isDirectory")) {
            throw new IOException("the shm directory " + dir + " is not a directory" + remove);
        }
        int owner = (Integer) a.get("uid");
        int mode = (Integer) a.get("mode") & 07777;
        if (owner != uid) {
            throw new IOException("the shm directory " + dir + " is owned by " + userName(owner) + ", not by this"
                + " process's user (uid " + uid + "), with mode " + octal(mode) + ": another user could replace"
                + " listener sockets in it or hold its bind lock" + remove);
        }
        int expected = group == null ? 0700 : 0770;
        if (mode != expected) {
            throw new IOException("the shm directory " + dir + " has mode " + octal(mode) + ", expected exactly "
                + octal(expected) + (group == null ? "" : " (rdmanio.shm.group " + group.getName() + ")")
                + ": with more, another user could place files in it; fix it with chmod " + octal(expected)
                + " " + dir + remove);
        }
        if (group != null && !group.equals(a.get("group"))) {
            throw new IOException("the shm directory " + dir + " belongs to group " + a.get("group")
                + ", not to rdmanio.shm.group " + group.getName() + "; fix it with chgrp " + group.getName() + " "
                + dir + remove);
        }
        verifyAncestors(dir, dir.getParent());
    }

    /**
     * Every directory from {@code from} up (links resolved: a root-owned {@code /dev/shm -> /run/shm} is fine) must
     * be owned by root or this user and, if others may write it, sticky, so that no one else can rename {@code dir}
     * away and put their own in its place.
     */
    private static void verifyAncestors(Path dir, Path from) throws IOException {
        int uid = ShmHost.uid();
        for (Path p = from.toRealPath(); p != null; p = p.getParent()) {
            Map<String, Object> a = Files.readAttributes(p, "unix:uid,mode", LinkOption.NOFOLLOW_LINKS);
            int owner = (Integer) a.get("uid");
            int mode = (Integer) a.get("mode");
            boolean othersWrite = (mode & 0022) != 0;
            boolean sticky = (mode & 01000) != 0;
            if ((owner != 0 && owner != uid) || (othersWrite && !sticky)) {
                throw new IOException("the shm directory " + dir + " lies in " + p + ", owned by " + userName(owner)
                    + " with mode " + octal(mode & 07777) + ": another user could rename the shm directory away and"
                    + " put their own in its place (a directory above it must be owned by root or this user, and"
                    + " sticky if others may write it, as /dev/shm is)" + FIX);
            }
        }
    }

    private static String octal(int mode) {
        return String.format("%04o", mode);
    }

    private static String userName(int uid) {
        String name = ShmHost.userNameOfUid(uid);
        return "uid " + uid + (name == null ? "" : " (" + name + ")");
    }
}
