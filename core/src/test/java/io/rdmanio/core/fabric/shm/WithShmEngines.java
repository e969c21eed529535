package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.EngineConfig;
import io.rdmanio.core.engine.Engines;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Two shm fabrics of one JVM standing for two processes (each with its own region directory, pool and completion
 * queues, as a process has), an engine on each, on a directory of their own; all closed after each test.
 */
abstract class WithShmEngines {

    protected Path dir;
    protected ShmFabric clientFabric;
    protected ShmFabric serverFabric;
    protected Engine client;
    protected Engine server;

    @BeforeEach
    void openEngines() throws IOException {
        dir = ShmTestSupport.newDirectory();
        clientFabric = ShmTestSupport.open(dir);
        serverFabric = ShmTestSupport.open(dir);
        client = Engines.open(clientFabric, EngineConfig.DEFAULT);
        server = Engines.open(serverFabric, EngineConfig.DEFAULT);
    }

    @AfterEach
    void closeEngines() throws IOException {
        client.close();
        server.close();
        clientFabric.close();
        serverFabric.close();
        ShmTestSupport.deleteDirectory(dir);
    }
}
