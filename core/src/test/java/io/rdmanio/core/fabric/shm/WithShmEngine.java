package io.rdmanio.core.fabric.shm;

import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.EngineConfig;
import io.rdmanio.core.engine.Engines;
import java.io.IOException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** Base of the shm tests that run the connection engine over a fabric of this process, in a private directory. */
abstract class WithShmEngine extends WithShmDirectory {

    protected ShmFabric fabric;
    protected Engine engine;

    @BeforeEach
    void openEngine() throws IOException {
        fabric = ShmTestSupport.open(dir);
        engine = Engines.open(fabric, EngineConfig.DEFAULT);
    }

    @AfterEach
    void closeEngine() throws IOException {
        engine.close();
        fabric.close();
    }
}
