package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.fabric.Fabrics;
import io.rdmanio.core.fabric.loopback.LoopbackFabric;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * Test fixture: a loopback fabric with a client engine and a server engine, driven by the test's own thread.
 */
final class Pair implements AutoCloseable {

    static final long TIMEOUT_NANOS = 30_000_000_000L;

    final LoopbackFabric fabric;
    final FabricEngine client;
    final FabricEngine server;
    final Listener listener;

    Pair(EngineConfig config) throws IOException {
        this(config, 1L);
    }

    Pair(EngineConfig config, long seed) throws IOException {
        this(config, seed, false);
    }

    /** {@code inline}: the fabric offers inline sends of a whole slot, so data frames go out inline. */
    Pair(EngineConfig config, long seed, boolean inline) throws IOException {
        this(config, seed, inline, ConnectionOptions.DEFAULT);
    }

    /** {@code serverOptions}: the options of the connections the listener accepts. */
    Pair(EngineConfig config, long seed, boolean inline, ConnectionOptions serverOptions) throws IOException {
        fabric = (LoopbackFabric) Fabrics.open("loopback", Map.of("loopback.seed", Long.toString(seed)));
        if (inline) {
            fabric.offerInline(config.slotSize());
        }
        client = (FabricEngine) Engines.open(fabric, config);
        server = (FabricEngine) Engines.open(fabric, config);
        listener = server.listen(new InetSocketAddress("127.0.0.1", 0), 1024, serverOptions);
    }

    /**
     * Options whose SO_RCVBUF is {@code config}'s default ring: the same window, but sized by the application, so
     * a reader that does not read holds its ring alone (no spill), as tests of a full window need.
     */
    static ConnectionOptions ringOnly(EngineConfig config) {
        return new ConnectionOptions(config.ringDepth() * config.slotSize(), 0);
    }

    int pump() {
        return client.progress() + server.progress();
    }

    /** Connects one client to the listener; returns {client, server}. */
    FabricConnection[] connect(ConnectionOptions clientOptions) throws IOException {
        Connection c = client.connect(listener.localAddress(), clientOptions);
        Connection[] accepted = new Connection[1];
        boolean[] connected = new boolean[1];
        await("connect", () -> {
            pump();
            try {
                if (accepted[0] == null) {
                    accepted[0] = listener.accept();
                }
                connected[0] = connected[0] || c.finishConnect();
            } catch (IOException e) {
                throw new AssertionError(e);
            }
            return accepted[0] != null && connected[0];
        });
        return new FabricConnection[] {(FabricConnection) c, (FabricConnection) accepted[0]};
    }

    FabricConnection[] connect() throws IOException {
        return connect(ConnectionOptions.DEFAULT);
    }

    /** Pumps until {@code condition} holds; fails the test after the timeout. */
    void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        while (!condition.getAsBoolean()) {
            pump();
            if (System.nanoTime() - deadline > 0) {
                fail("timed out waiting for " + what);
            }
        }
    }

    static long write(Connection c, ByteBuffer b) throws IOException {
        return c.write(new ByteBuffer[] {b}, 0, 1);
    }

    static long read(Connection c, ByteBuffer b) throws IOException {
        return c.read(new ByteBuffer[] {b}, 0, 1);
    }

    /** Waits (pumping) until {@code c} fails, and returns the failure. */
    IOException awaitFailure(Connection c) {
        IOException[] seen = new IOException[1];
        await("a failure of " + c, () -> {
            try {
                read(c, ByteBuffer.allocate(16));
                return false;
            } catch (IOException e) {
                seen[0] = e;
                return true;
            }
        });
        assertNotNull(seen[0]);
        return seen[0];
    }

    @Override
    public void close() throws IOException {
        listener.close();
        client.close();
        server.close();
        fabric.close();
    }
}
