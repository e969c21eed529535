package io.rdmanio.core.fabric.shm;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Base of the shm tests that each run in a private shm directory ({@link ShmTestSupport#newDirectory}): made
 * before each test, removed after it (after a subclass's own clean-up, which JUnit runs first).
 */
abstract class WithShmDirectory {

    protected Path dir;

    @BeforeEach
    void createShmDirectory() throws IOException {
        dir = ShmTestSupport.newDirectory();
    }

    @AfterEach
    void deleteShmDirectory() throws IOException {
        ShmTestSupport.deleteDirectory(dir);
    }
}
