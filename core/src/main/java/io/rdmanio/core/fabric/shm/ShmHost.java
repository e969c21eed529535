package io.rdmanio.core.fabric.shm;

import java.io.FileDescriptor;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * Facts about this host and its processes that the shm fabric needs: the kernel boot id, user ids, the identity of
 * the shared directory, file descriptor paths under {@code /proc} and whether a process is gone.
 *
 * <p>Thread-safe (stateless). Linux only: everything is read from {@code /proc}.
 */
final class ShmHost {

    static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");

    private ShmHost() {
    }

    /** The kernel boot id, 36 characters; two processes see the same one only on the same running kernel. */
    static String bootId() throws IOException {
        return Uninterruptibly.call(() -> Files.readString(BOOT_ID, StandardCharsets.US_ASCII)).trim();
    }

    /** This process's real user id. */
    static int uid() throws IOException {
        return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    }

    static long pid() {
        return ProcessHandle.current().pid();
    }

    /** Device and inode of {@code path}, which name one directory on one host. */
    static long[] deviceAndInode(Path path) throws IOException {
        return new long[] {
            (Long) Files.getAttribute(path, "unix:dev"),
            (Long) Files.getAttribute(path, "unix:ino")
        };
    }

    static long inode(Path path) throws IOException {
        return (Long) Files.getAttribute(path, "unix:ino");
    }

    /**
     * The number of {@code fd}, which is open on {@code file}: asked of the JDK ({@code sun.nio.ch.IOUtil.fdVal},
     * callable where {@code sun.nio.ch} is exported, as the agent and rdmanio's provider flag do), else found by
     * {@link #descriptorOf(Path) scanning}. Called once per created file, before it is unlinked.
     */
    static int descriptorOf(FileDescriptor fd, Path file) throws IOException {
        Method fdVal = FdVal.METHOD;
        if (fdVal != null) {
            try {
                return (int) fdVal.invoke(null, fd);
            } catch (ReflectiveOperationException | RuntimeException e) {
                // not callable after all: scan
            }
        }
        return descriptorOf(file);
    }

    /** Whether {@link #descriptorOf(FileDescriptor, Path)} asks the JDK rather than scanning. */
    static boolean asksTheJdk() {
        return FdVal.METHOD != null;
    }

    /** {@code sun.nio.ch.IOUtil.fdVal(FileDescriptor)} if this code may call it, else null; looked up once. */
    private static final class FdVal {
        static final Method METHOD = lookUp();

        private static Method lookUp() {
            try {
                Method m = Class.forName("sun.nio.ch.IOUtil").getMethod("fdVal", FileDescriptor.class);
                m.invoke(null, FileDescriptor.in);
                return m;
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                return null;
            }
        }
    }

    /**
     * The number of the descriptor this process holds open on {@code file}, found by reading the links in
     * {@code /proc/self/fd}: one system call per open descriptor of the process (about 0.4 ms with 100 open,
     * 8 ms with 2,000), so only where the JDK cannot say.
     */
    static int descriptorOf(Path file) throws IOException {
        String target = file.toAbsolutePath().normalize().toString();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            for (Path fd : fds) {
                try {
                    if (Files.readSymbolicLink(fd).toString().equals(target)) {
                        return Integer.parseInt(fd.getFileName().toString());
                    }
                } catch (IOException | NumberFormatException e) {
                    // The descriptor closed while listing (the listing's own one does): not the one looked for.
                }
            }
        }
        throw new IOException("no open descriptor of " + file + " found in /proc/self/fd");
    }

    /**
     * The path through which another process of the same user opens a file that process {@code pid} holds open as
     * descriptor {@code fd}, even after the file was unlinked.
     */
    static Path descriptorPath(long pid, int fd) {
        return Path.of("/proc", Long.toString(pid), "fd", Integer.toString(fd));
    }

    /** Whether process {@code pid} is gone: no entry in {@code /proc}, or a zombie that can no longer run. */
    static boolean isGone(long pid) {
        try {
            // Read through a file channel, which a caller's interrupt would close.
            String stat = Uninterruptibly.call(
                () -> Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII));
            int close = stat.lastIndexOf(')');
            char state = close >= 0 && close + 2 < stat.length() ? stat.charAt(close + 2) : '?';
            return state == 'Z' || state == 'X';
        } catch (NoSuchFileException e) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The numeric uid of a user name as the JDK reports it (a number when the user has no name), or -1. */
    static int uidOfUserName(String name) {
        try {
            return Integer.parseInt(name);
        } catch (NumberFormatException e) {
            // a name: look it up below
        }
        try {
            List<String> lines = Files.readAllLines(Path.of("/etc/passwd"), StandardCharsets.UTF_8);
            for (String line : lines) {
                String[] f = line.split(":", -1);
                if (f.length > 2 && f[0].equals(name)) {
                    return Integer.parseInt(f[2]);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // unknown: -1 below
        }
        return -1;
    }

    /** The name of user {@code uid} in {@code /etc/passwd}, or {@code null}. */
    static String userNameOfUid(int uid) {
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"), StandardCharsets.UTF_8)) {
                String[] f = line.split(":", -1);
                if (f.length > 2 && f[2].equals(Integer.toString(uid))) {
                    return f[0];
                }
            }
        } catch (IOException e) {
            // unknown: null below
        }
        return null;
    }
}
