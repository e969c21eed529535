package io.rdmanio.selector.config;

import io.rdmanio.core.Logs;
import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.Listener;
import io.rdmanio.core.engine.ReadinessListener;
import io.rdmanio.core.resolver.Endpoints;
import io.rdmanio.core.resolver.Resolver;
import java.io.IOException;
import java.net.InetSocketAddress;
import org.slf4j.Logger;

/**
 * An engine whose listeners register with the resolver: a fabric bind makes this process answer queries for the
 * address and announce it; closing the listener withdraws it. A registration that fails is logged and the
 * listener works on (peers with rules still reach it). Thread-safe as the engine.
 */
final class RegisteringEngine extends ForwardingEngine {

    private static final Logger LOG = Logs.get(RegisteringEngine.class);

    private final AutoRouting auto;

    RegisteringEngine(Engine engine, AutoRouting auto) {
        super(engine);
        this.auto = auto;
    }

    @Override
    public Listener listen(InetSocketAddress local, int backlog, ConnectionOptions options) throws IOException {
        Listener l = engine.listen(local, backlog, options);
        InetSocketAddress bound = l.localAddress();
        Endpoints endpoints = AutoRouting.endpointsFor(engine.fabricName(), bound);
        Resolver resolver = endpoints == null ? null : auto.resolver();
        if (resolver == null) {
            return l;
        }
        try {
            resolver.register(bound, endpoints, Resolver.newIncarnation());
        } catch (IOException | RuntimeException e) {
            LOG.warn("rdmanio: the {} listener on {} is not announced to the resolver: {}", engine.fabricName(),
                bound, e.getMessage());
            return l;
        }
        return new Registered(l, bound, resolver);
    }








    /** A registered listener: closing it withdraws the address first, then closes. */
    private static final class Registered implements Listener {
        private final Listener l;
        private final InetSocketAddress address;
        private final Resolver resolver;

        Registered(Listener l, InetSocketAddress address, Resolver resolver) {
            this.l = l;
            this.address = address;
            this.resolver = resolver;
        }

        @Override
        public Connection accept() throws IOException {
            return l.accept();
        }

        @Override
        public int readyOps() {
            return l.readyOps();
        }

        @Override
        public int await(int ops, long timeoutNanos) throws IOException {
            return l.await(ops, timeoutNanos);
        }

        @Override
        public void addReadinessListener(ReadinessListener listener) {
            l.addReadinessListener(listener);
        }

        @Override
        public void removeReadinessListener(ReadinessListener listener) {
            l.removeReadinessListener(listener);
        }

        @Override
        public InetSocketAddress localAddress() {
            return l.localAddress();
        }

        @Override
        public Engine engine() {
            return l.engine();
        }

        @Override
        public void close() {
            resolver.unregister(address);
            l.close();
        }
    }
}
