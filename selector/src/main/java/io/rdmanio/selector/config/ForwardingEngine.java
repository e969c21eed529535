package io.rdmanio.selector.config;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.ConnectionInfo;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.EngineStats;
import io.rdmanio.core.engine.Listener;
import io.rdmanio.core.fabric.Notifier;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SelectableChannel;
import java.util.List;

/**
 * An engine that hands every call to another, for wrappers that change one or two of them. Every method of
 * {@link Engine} is forwarded here, the default ones included: a wrapper that left {@link #wakeupChannels()} to
 * the interface's default would hide the fabric's wakeup channel from the selector and quietly put every wakeup
 * back on a fabric thread.
 *
 * <p>Thread-safe as the engine it forwards to.
 */
abstract class ForwardingEngine implements Engine {

    protected final Engine engine;

    ForwardingEngine(Engine engine) {
        this.engine = engine;
    }

    @Override
    public String fabricName() {
        return engine.fabricName();
    }

    @Override
    public Listener listen(InetSocketAddress local, int backlog, ConnectionOptions options) throws IOException {
        return engine.listen(local, backlog, options);
    }

    @Override
    public Connection connect(InetSocketAddress remote, ConnectionOptions options) throws IOException {
        return engine.connect(remote, options);
    }

    @Override
    public int progress() {
        return engine.progress();
    }

    @Override
    public boolean arm(Notifier notifier) {
        return engine.arm(notifier);
    }

    @Override
    public List<SelectableChannel> wakeupChannels() {
        return engine.wakeupChannels();
    }

    @Override
    public boolean arm(Notifier notifier, List<SelectableChannel> watched) {
        return engine.arm(notifier, watched);
    }

    @Override
    public long spinNanos() {
        return engine.spinNanos();
    }

    @Override
    public int openConnections() {
        return engine.openConnections();
    }

    @Override
    public List<ConnectionInfo> connectionTable() {
        return engine.connectionTable();
    }

    @Override
    public EngineStats stats() {
        return engine.stats();
    }

    @Override
    public void close() {
        engine.close();
    }
}
