package io.rdmanio.selector.config;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.ReadinessListener;
import io.rdmanio.core.resolver.Resolver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * An engine for one connect that the resolver routed: it connects to the address the resolver named for the
 * fabric (the RDMA interface's address may differ from the one the application asked for), and a connect that
 * fails invalidates the resolver's entry, so the next connect asks again. Everything else is the engine's own.
 * Thread-safe as the engine.
 */
final class ResolvedEngine extends ForwardingEngine {

    private final InetSocketAddress logical;
    private final InetSocketAddress target;
    private final Resolver resolver;

    ResolvedEngine(Engine engine, InetSocketAddress logical, InetSocketAddress target, Resolver resolver) {
        super(engine);
        this.logical = logical;
        this.target = target;
        this.resolver = resolver;
    }

    @Override
    public Connection connect(InetSocketAddress remote, ConnectionOptions options) throws IOException {
        try {
            return new Watched(engine.connect(remote.equals(logical) ? target : remote, options));
        } catch (IOException | RuntimeException e) {
            resolver.invalidate(logical);
            throw e;
        }
    }

    /** The connection, with a failed connect invalidating the resolver's entry; it reports the logical peer. */
    private final class Watched implements Connection {
        private final Connection c;

        Watched(Connection c) {
            this.c = c;
        }

        @Override
        public boolean finishConnect() throws IOException {
            try {
                return c.finishConnect();
            } catch (IOException e) {
                resolver.invalidate(logical);
                throw e;
            }
        }

        @Override
        public boolean isConnected() {
            return c.isConnected();
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            return c.read(dsts, offset, length);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            return c.write(srcs, offset, length);
        }

        @Override
        public long writeDirect(ByteBuffer[] srcs, int offset, int length) throws IOException {
            return c.writeDirect(srcs, offset, length);
        }

        @Override
        public void blockingWrite(boolean underWay) {
            c.blockingWrite(underWay);
        }

        @Override
        public boolean allPosted() {
            return c.allPosted();
        }

        @Override
        public int available() throws IOException {
            return c.available();
        }

        @Override
        public void shutdownOutput() throws IOException {
            c.shutdownOutput();
        }

        @Override
        public void shutdownInput() throws IOException {
            c.shutdownInput();
        }

        @Override
        public int readyOps() {
            return c.readyOps();
        }

        @Override
        public int await(int ops, long timeoutNanos) throws IOException {
            return c.await(ops, timeoutNanos);
        }

        @Override
        public boolean awaitClosed(long timeoutNanos) {
            return c.awaitClosed(timeoutNanos);
        }

        @Override
        public void setLingerZero(boolean lingerZero) {
            c.setLingerZero(lingerZero);
        }

        @Override
        public int writeUrgent(ByteBuffer src) throws IOException {
            return c.writeUrgent(src);
        }

        @Override
        public void setOobInline(boolean on) {
            c.setOobInline(on);
        }

        @Override
        public int sendBufferSize() {
            return c.sendBufferSize();
        }

        @Override
        public void addReadinessListener(ReadinessListener listener) {
            c.addReadinessListener(listener);
        }

        @Override
        public void removeReadinessListener(ReadinessListener listener) {
            c.removeReadinessListener(listener);
        }

        @Override
        public InetSocketAddress localAddress() {
            return c.localAddress();
        }

        @Override
        public InetSocketAddress remoteAddress() {
            return logical;
        }

        @Override
        public Engine engine() {
            return c.engine();
        }

        @Override
        public void close() {
            c.close();
        }

        @Override
        public void abort() {
            c.abort();
        }
    }
}
