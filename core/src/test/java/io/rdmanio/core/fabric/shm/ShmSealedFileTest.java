package io.rdmanio.core.fabric.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The shared files of the sealed fabric: memfds that nobody can shrink or grow, and that leave no name behind. */
class ShmSealedFileTest extends WithShmDirectory {

    @Test
    void aSharedFileIsASealedMemfdThatCannotChangeSize() throws Exception {
        ShmHostilePeerTest.requireSealedMemory();
        try (ShmFile file = ShmFile.create(dir.resolve("r-test-1"), 1 << 20, null)) {
            int seals = ShmNatives.seals(file.fd);
            assertEquals(ShmNatives.F_SEAL_SHRINK | ShmNatives.F_SEAL_GROW | ShmNatives.F_SEAL_SEAL,
                seals & (ShmNatives.F_SEAL_SHRINK | ShmNatives.F_SEAL_GROW | ShmNatives.F_SEAL_SEAL));
            try (Stream<Path> names = Files.list(dir)) {
                assertEquals(0, names.count(), "a memfd has no name in the shm directory");
            }
            Path proc = ShmHost.descriptorPath(ProcessHandle.current().pid(), file.fd);
            try (FileChannel ch = FileChannel.open(proc, StandardOpenOption.WRITE)) {
                IOException shrink = assertThrows(IOException.class, () -> ch.truncate(0));
                assertTrue(shrink.getMessage().contains("Operation not permitted"), shrink.toString());
                assertThrows(IOException.class, () -> ch.write(ByteBuffer.allocate(1), 2L << 20), "growing it");
                assertEquals(1 << 20, ch.size());
            }
            file.buffer.put((1 << 20) - 1, (byte) 7);
            MappedByteBuffer again = ShmFile.mapPeer(ProcessHandle.current().pid(), file.fd, file.inode, 1 << 20);
            assertEquals(7, again.get((1 << 20) - 1), "a peer maps the same memory, after checking its seals");
        }
    }

    @Test
    void anUnsealedFileIsRefusedWhereMemoryIsSealed() throws Exception {
        ShmHostilePeerTest.requireSealedMemory();
        ShmNatives.offForTests(true);
        ShmFile plain;
        try {
            plain = ShmFile.create(dir.resolve("r-test-2"), 4096, null);
        } finally {
            ShmNatives.offForTests(false);
        }
        try (ShmFile f = plain) {
            IOException e = assertThrows(IOException.class,
                () -> ShmFile.mapPeer(ProcessHandle.current().pid(), f.fd, f.inode, 4096));
            assertTrue(e.getMessage().contains("is not sealed against shrinking and growing (seals 0x"),
                e.getMessage());
        }
    }
}
