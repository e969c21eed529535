package io.rdmanio.core.resolver;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.Map;

/**
 * Where the resolver learns which listeners serve an address over a fabric. The broadcast backend and the static
 * file are built in; a directory service (ZooKeeper, etcd, Consul, a database) plugs in by implementing this and
 * passing it to {@link Resolver#addBackend}. Backends are asked in order; an address one backend settles (found,
 * or known not to be served) is not asked of the next.
 *
 * <p>Implementations must be thread-safe: {@link #resolve} is called by many threads at once, and
 * {@link #publish}/{@link #withdraw} by whichever thread binds or closes a listener.
 */
public interface ResolverBackend extends AutoCloseable {

    /** A short name for the doctor and for {@link Resolution#source()}: {@code "zookeeper"}. */
    String name();

    /**
     * Resolves as many of {@code addresses} as this backend can within {@code budgetNanos}.
     *
     * @return a {@link Resolution} for each address it settled: {@link Resolution#found() found}, or
     *         {@link Resolution#none} when it knows no fabric listener serves it; an address left out is unknown
     *         here and asked of the next backend
     * @throws IOException when the backend cannot be reached; the resolver counts it and asks the next backend
     */
    Map<InetSocketAddress, Resolution> resolve(Collection<InetSocketAddress> addresses, long budgetNanos)
        throws IOException;

    /** A fabric listener on {@code address} opened in this process; a directory records it. */
    default void publish(InetSocketAddress address, Endpoints endpoints, long incarnation) throws IOException {
    }

    /** The listener with {@code incarnation} on {@code address} closed. */
    default void withdraw(InetSocketAddress address, long incarnation) throws IOException {
    }

    @Override
    default void close() {
    }
}
