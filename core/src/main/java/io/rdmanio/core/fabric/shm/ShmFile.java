package io.rdmanio.core.fabric.shm;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * A shared file that has no name: a sealed memfd (see {@link ShmNatives}: no process can change its size, so no
 * peer can make this process's accesses fault), or, where sealed memory is not available, a file created in the
 * shm directory, mapped, then unlinked at once, so that a crash cannot leave it behind. It lives on through the open descriptor (which a peer of the same user opens as
 * {@code /proc/PID/fd/FD}) and through every mapping of it; closing the descriptor leaves the mappings valid.
 *
 * <p>Mappings are released when their buffer is garbage-collected (the JDK unmaps a collected
 * {@link MappedByteBuffer}); the fabric never unmaps explicitly, so no thread can touch unmapped memory.
 *
 * <p>Thread-safe for {@link #close} (idempotent); the buffer follows the rules of its users.
 */
final class ShmFile implements AutoCloseable {

    static final Set<PosixFilePermission> OWNER_ONLY =
        Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
    static final Set<PosixFilePermission> OWNER_AND_GROUP = Set.of(PosixFilePermission.OWNER_READ,
        PosixFilePermission.OWNER_WRITE, PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE);

    /** The seals a peer's file must carry where this process seals its own: no shrinking, no growing. */
    static final int REQUIRED_SEALS = ShmNatives.F_SEAL_SHRINK | ShmNatives.F_SEAL_GROW;

    final MappedByteBuffer buffer;
    final int fd;
    final long inode;
    /** An unsealed file's channel, kept to grow the file back if a peer shrinks it; {@code null} once closed. */
    private FileChannel channel;
    /** A sealed memfd's descriptor ({@link #fd}) is still open. */
    private boolean sealedOpen;

    private ShmFile(FileChannel channel, MappedByteBuffer buffer, int fd, long inode) {
        this.channel = channel;
        this.buffer = buffer;
        this.fd = fd;
        this.inode = inode;
        this.sealedOpen = channel == null;
    }

    /**
     * Creates and maps a shared file of {@code length} bytes: a sealed memfd (see {@link ShmNatives}) where sealed
     * memory is available, else {@code path}, created, sized, mapped and unlinked. Mode 0600, or 0660 owned by
     * {@code group} when given.
     */
    static ShmFile create(Path path, int length, GroupPrincipal group) throws IOException {
        // Not on the caller's thread, whose interrupt must not close the new file's channel (see onFileThread).
        return Uninterruptibly.onFileThread(() -> ShmNatives.available()
            ? createSealedOnce(path.getFileName().toString(), length, group) : createOnce(path, length, group));
    }

    /**
     * A memfd that nobody can shrink or grow, mapped through this process's own {@code /proc/self/fd} entry (which
     * no other process can change); peers open it as {@code /proc/PID/fd/FD}, as they open an unlinked file.
     */
    private static ShmFile createSealedOnce(String name, int length, GroupPrincipal group) throws IOException {
        int fd = ShmNatives.createSealed("rdmanio-" + name, length);
        try {
            Path self = ShmHost.descriptorPath(ProcessHandle.current().pid(), fd);
            Files.setPosixFilePermissions(self, group == null ? OWNER_ONLY : OWNER_AND_GROUP);
            if (group != null) {
                Files.setAttribute(self, "posix:group", group);
            }
            MappedByteBuffer buffer;
            try (FileChannel channel = FileChannel.open(self, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                buffer = channel.map(FileChannel.MapMode.READ_WRITE, 0, length);
            }
            return new ShmFile(null, buffer, fd, ShmHost.inode(self));
        } catch (IOException | RuntimeException e) {
            ShmNatives.close(fd);
            throw e;
        }
    }

    private static ShmFile createOnce(Path path, int length, GroupPrincipal group) throws IOException {
        // Created exclusively, then opened through RandomAccessFile: its FileDescriptor lets the JDK say which
        // descriptor number a peer opens (the directory is this user's alone, 0700, so nothing can swap the file
        // between the two steps).
        Files.createFile(path, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        RandomAccessFile file;
        try {
            file = new RandomAccessFile(path.toFile(), "rw");
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(path);
            throw e;
        }
        FileChannel channel = file.getChannel();
        try {
            Files.setPosixFilePermissions(path, group == null ? OWNER_ONLY : OWNER_AND_GROUP);
            if (group != null) {
                Files.setAttribute(path, "posix:group", group);
            }
            channel.write(ByteBuffer.allocate(1), length - 1L);
            MappedByteBuffer buffer = channel.map(FileChannel.MapMode.READ_WRITE, 0, length);
            int fd = ShmHost.descriptorOf(file.getFD(), path);
            long inode = ShmHost.inode(path);
            Files.delete(path);
            return new ShmFile(channel, buffer, fd, inode);
        } catch (IOException | RuntimeException e) {
            channel.close();
            Files.deleteIfExists(path);
            throw e;
        }
    }

    /**
     * Maps a file another process holds open as descriptor {@code fd}, checking it is the file with
     * {@code inode}. The descriptor this opens is closed before returning; the mapping stays.
     *
     * <p>A peer region is mapped on first use by whichever thread posts a send into it, which may be a thread
     * carrying its interrupt status (a progress call from an interrupted reader): the mapping runs on the fabric's
     * file thread ({@link Uninterruptibly#onFileThread}), so an interruptible {@code FileChannel} never turns the
     * interrupt into a {@code ClosedByInterruptException}, and the send into a perfectly live region into a
     * "remote operation error"; the caller keeps its interrupt status.
     */
    static MappedByteBuffer mapPeer(long pid, int fd, long inode, int length) throws IOException {
        // Also on the data path's first send to a peer region, on whatever thread posts it (an interrupted writer,
        // a selector thread carrying its interrupt status), under the connection's lock: the interrupt must
        // neither fail the mapping nor deadlock with the hook that closes the writer's channel (see onFileThread).
        return Uninterruptibly.onFileThread(() -> mapPeerOnce(pid, fd, inode, length));
    }

    private static MappedByteBuffer mapPeerOnce(long pid, int fd, long inode, int length) throws IOException {
        Path path = ShmHost.descriptorPath(pid, fd);
        if (ShmNatives.available()) {
            return mapSealedPeer(path, inode, length);
        }
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long actual = ShmHost.inode(path);
            if (actual != inode) {
                throw new IOException(path + " is inode " + actual + ", not the shared file " + inode
                    + " (the peer closed it)");
            }
            if (channel.size() < length) {
                throw new IOException(path + " holds " + channel.size() + " bytes, fewer than " + length);
            }
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, length);
        }
    }

    /**
     * Maps a peer's file only if it is sealed against shrinking and growing: opened once, natively, and that very
     * descriptor checked and mapped (through this process's {@code /proc/self/fd}), so the peer cannot swap the
     * file between the check and the mapping. An unsealed file is refused: a peer that shrank it under this
     * process's mapping would fault whatever thread touched it next.
     */
    private static MappedByteBuffer mapSealedPeer(Path path, long inode, int length) throws IOException {
        int own = ShmNatives.open(path);
        try {
            Path self = ShmHost.descriptorPath(ProcessHandle.current().pid(), own);
            long actual = ShmHost.inode(self);
            if (actual != inode) {
                throw new IOException(path + " is inode " + actual + ", not the shared file " + inode
                    + " (the peer closed it)");
            }
            int seals = ShmNatives.seals(own);
            if ((seals & REQUIRED_SEALS) != REQUIRED_SEALS) {
                throw new IOException("the peer's shared memory " + path + " is not sealed against shrinking and"
                    + " growing (seals 0x" + Integer.toHexString(seals) + "): a peer that shrank it could fault this"
                    + " process, so it is refused (the peer runs without rdmanio's sealed memory: "
                    + ShmNatives.SEALED_PROPERTY + "=false, no librdmanio-shm, or JDK 24+ without"
                    + " --enable-native-access=ALL-UNNAMED there; give both sides the same)");
            }
            try (FileChannel channel = FileChannel.open(self, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                if (channel.size() < length) {
                    throw new IOException(path + " holds " + channel.size() + " bytes, fewer than " + length);
                }
                return channel.map(FileChannel.MapMode.READ_WRITE, 0, length);
            }
        } finally {
            ShmNatives.close(own);
        }
    }

    /**
     * Grows the file back to its mapped length if someone (a peer holding a descriptor of it) shrank it, so that
     * no access to the mapping faults any more (the pages come back zero-filled); a no-op once closed.
     *
     * @return whether it had shrunk
     */
    synchronized boolean ensureNotShrunk() {
        if (channel == null) {
            return false;
        }
        try {
            if (channel.size() >= buffer.capacity()) {
                return false;
            }
            channel.write(ByteBuffer.allocate(1), buffer.capacity() - 1L);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Closes the descriptor: no peer can map the file any more; mappings stay valid. */
    @Override
    public synchronized void close() {
        if (sealedOpen) {
            sealedOpen = false;
            try {
                ShmNatives.close(fd);
            } catch (IOException e) {
                // closing a memfd's descriptor: nothing to recover
            }
        }
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException e) {
                // closing a descriptor of an unlinked file: nothing to recover
            }
            channel = null;
        }
    }

    synchronized boolean isOpen() {
        return channel != null || sealedOpen;
    }
}
