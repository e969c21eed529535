package io.rdmanio.core.resolver;

import java.net.InetSocketAddress;

/**
 * What the resolver knows about one address: the fabric endpoints of its listener, or that none serves it. Immutable.
 *
 * @param address     the logical address asked about
 * @param endpoints   the listener's fabric endpoints, or {@code null} when no fabric listener is known
 * @param incarnation the listener's incarnation (0 when none)
 * @param source      how this was learnt, for people: "answer from 10.0.0.2:7471 in 3 ms", "static file f:3", ...
 */
public record Resolution(InetSocketAddress address, Endpoints endpoints, long incarnation, String source) {

    public static Resolution none(InetSocketAddress address, String source) {
        return new Resolution(address, null, 0, source);
    }

    /** Whether a fabric listener serves the address. */
    public boolean found() {
        return endpoints != null;
    }

    @Override
    public String toString() {
        return address + " -> " + (found() ? endpoints + " (incarnation " + Long.toUnsignedString(incarnation, 16)
            + ")" : "no fabric listener") + " [" + source + "]";
    }
}
