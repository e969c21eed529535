package io.rdmanio.core.resolver;

import java.net.InetSocketAddress;

/**
 * What the resolver knows about one address: the fabric endpoints of its listener, or that none serves it. Immutable.
 *
 * @param address     the logical address asked about
 * @param endpoints   the listener's fabric endpoints, or {@code null} when no fabric listener is known
 * @param incarnation the listener's incarnation (0 when none)
 * @param source      how this was learnt, for people: "answer from 10.0.0.2:7471 in 3 ms", "static file f:3", ...
 * @param origin      how far it can be trusted: what kind of source vouches for it
 */
public record Resolution(InetSocketAddress address, Endpoints endpoints, long incarnation, String source,
                         Origin origin) {

    /**
     * Where an answer came from, which decides what may replace it (see {@code ResolverCache}). Only
     * {@link #CONFIGURED} and {@link #SIGNED} answers are authenticated; the other two are what anyone on the subnet
     * could have sent.
     */
    public enum Origin {
        /** The static file, a directory backend, or this process's own knowledge. */
        CONFIGURED,
        /** A packet signed with the cluster key. */
        SIGNED,
        /** An unsigned answer to a query this process sent (matched by its nonce). */
        ANSWER,
        /** An unsigned announcement nobody asked for. */
        ANNOUNCEMENT;

        /** Whether a key or the configuration vouches for it. */
        public boolean verified() {
            return this == CONFIGURED || this == SIGNED;
        }
    }

    /** A configured resolution (static file, directory backend). */
    public Resolution(InetSocketAddress address, Endpoints endpoints, long incarnation, String source) {
        this(address, endpoints, incarnation, source, Origin.CONFIGURED);
    }

    public static Resolution none(InetSocketAddress address, String source) {
        return new Resolution(address, null, 0, source);
    }

    /** Whether a fabric listener serves the address. */
    public boolean found() {
        return endpoints != null;
    }

    /** Whether a key or the configuration vouches for it (else anyone on the subnet could have sent it). */
    public boolean verified() {
        return origin.verified();
    }

    @Override
    public String toString() {
        return address + " -> " + (found() ? endpoints + " (incarnation " + Long.toUnsignedString(incarnation, 16)
            + (verified() ? "" : ", unauthenticated") + ")" : "no fabric listener") + " [" + source + "]";
    }
}
