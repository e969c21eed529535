package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A client JVM of another user (run as {@code nobody} through setpriv; needs root) connecting to a listener of
 * this JVM's user through the NIO API on the shm fabric: refused naming why (the directory is not theirs to use,
 * even opened to all). The files the fabric makes are the owner's only.
 */
@Timeout(value = 120)
class ShmPermissionTest {

    private static final Path SETPRIV = Path.of("/usr/bin/setpriv");

    private static boolean root() throws IOException {
        return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
    }

    @Test
    void clientOfAnotherUserIsRefusedNamingWhy() throws Exception {
        Assumptions.assumeTrue(root() && Files.isExecutable(SETPRIV),
            "needs root and " + SETPRIV + " to run the client as nobody");
        Path world = Files.createTempDirectory("rdmanio-perm-");
        try (ShmNio shm = ShmNio.open()) {
            Files.setPosixFilePermissions(world, PosixFilePermissions.fromString("rwxr-xr-x"));
            String classPath = worldReadableClassPath(world);
            Path rules = PeerJvm.rules(world);
            Files.setPosixFilePermissions(rules, PosixFilePermissions.fromString("rw-r--r--"));

            ServerSocketChannel server = shm.provider.openServerSocketChannel();
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
            Path socket = shm.listenerSocket(port);
            assertTrue(Files.exists(socket, LinkOption.NOFOLLOW_LINKS), "the listener's socket " + socket);
            // Every file the fabric made is the owner's only; the directory too.
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(shm.dir)));
            try (Stream<Path> files = Files.list(shm.dir)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    assertEquals("rw-------", PosixFilePermissions.toString(
                        Files.getPosixFilePermissions(f, LinkOption.NOFOLLOW_LINKS)), f + " is the owner's only");
                }
            }

            List<String> asNobody = List.of(SETPRIV.toString(), "--reuid=nobody", "--regid=nogroup", "--clear-groups");
            // As the fabric makes them, the other user cannot even use the directory.
            String refusedByMode = connectAs(asNobody, classPath, shm.dir, rules, port, 1).get(0);
            System.out.println("nobody, directory 0700: " + refusedByMode);
            // The fabric is unavailable to that user, and the routing demands a fabric: the connect fails saying so.
            assertTrue(refusedByMode.startsWith("CONNECT-FAILED java.io.IOException")
                && refusedByMode.contains(shm.dir + " is owned by uid 0"), refusedByMode);

            // Opened up to everyone, the directory is still this user's: the other user's fabric refuses to use it
            // (a directory of another user could hold anyone's sockets), so the connect fails naming the owner.
            Files.setPosixFilePermissions(shm.dir, PosixFilePermissions.fromString("rwxrwxrwx"));
            Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
            String refusedByOwner = connectAs(asNobody, classPath, shm.dir, rules, port, 1).get(0);
            System.out.println("nobody, directory and socket open to all: " + refusedByOwner);
            assertTrue(refusedByOwner.startsWith("CONNECT-FAILED java.io.IOException")
                && refusedByOwner.contains(shm.dir + " is owned by uid 0"), refusedByOwner);
            Files.setPosixFilePermissions(shm.dir, PosixFilePermissions.fromString("rwx------"));
            server.configureBlocking(false);
            assertEquals(null, server.accept(), "a refused user never reaches the application as a connection");
            server.close();
        } finally {
            ShmNio.deleteDirectory(world);
        }
    }

    /** Runs a {@link NioPeerMain} under {@code prefix} that connects to {@code port} n times; its answers. */
    private static List<String> connectAs(List<String> prefix, String classPath, Path shmDir, Path rules, int port,
        int n) throws Exception {
        List<String> answers = new ArrayList<>();
        try (PeerJvm peer = PeerJvm.start(prefix, classPath, shmDir, rules, null, NioPeerMain.class)) {
            for (int i = 0; i < n; i++) {
                peer.send("connect " + port);
                String line = peer.poll("CONNECT", ShmNio.TIMEOUT_NANOS / 1_000_000);
                answers.add(line != null ? line : "ERROR no answer: " + peer.output());
            }
        }
        return answers;
    }

    /** This JVM's class path copied where another user can read it (the build's may sit in a private home). */
    private static String worldReadableClassPath(Path world) throws IOException {
        List<String> out = new ArrayList<>();
        int i = 0;
        for (String entry : System.getProperty("java.class.path").split(":")) {
            Path from = Path.of(entry);
            if (!Files.exists(from)) {
                continue;
            }
            Path to = world.resolve("cp" + i++ + (Files.isDirectory(from) ? "" : ".jar"));
            try (Stream<Path> walk = Files.walk(from)) {
                for (Path p : (Iterable<Path>) walk::iterator) {
                    Path target = to.resolve(from.relativize(p).toString());
                    if (Files.isDirectory(p)) {
                        Files.createDirectories(target);
                        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
                    } else {
                        Files.copy(p, Files.isDirectory(from) ? target : to);
                        Files.setPosixFilePermissions(Files.isDirectory(from) ? target : to,
                            PosixFilePermissions.fromString("rw-r--r--"));
                    }
                }
            }
            out.add(to.toString());
        }
        return String.join(":", out);
    }
}
