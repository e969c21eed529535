package io.rdmanio.core.fabric.loopback;

import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The JVM-wide address space of the loopback fabric: every bound id of every loopback fabric instance, by port,
 * so that two engines in one JVM reach each other.
 *
 * <p>All state is guarded by {@link #LOCK}, the connection-manager lock, which is taken before any queue-pair
 * lock. A wildcard address (0.0.0.0 or ::) on a port conflicts with every address on that port, as a socket
 * without SO_REUSEADDR would.
 */
final class LoopbackNamespace {

    /** The connection-manager lock: guards this namespace and the state of every loopback id. */
    static final Object LOCK = new Object();

    static final int EPHEMERAL_FIRST = 32768;
    static final int EPHEMERAL_LAST = 60999;

    // ---- guarded by LOCK
    private static final Map<Integer, List<LoopbackCmId>> BY_PORT = new HashMap<>();
    private static int nextEphemeral = EPHEMERAL_FIRST;

    private LoopbackNamespace() {
    }

    /**
     * Reserves {@code requested} (port 0: a free port) for {@code id}.
     *
     * @return the address bound
     */
    static InetSocketAddress bind(LoopbackCmId id, InetSocketAddress requested) throws BindException {
        assert Thread.holdsLock(LOCK);
        InetAddress address = requested.getAddress();
        int port = requested.getPort();
        if (port == 0) {
            for (int tries = 0; tries <= EPHEMERAL_LAST - EPHEMERAL_FIRST; tries++) {
                int candidate = nextEphemeral;
                nextEphemeral = candidate == EPHEMERAL_LAST ? EPHEMERAL_FIRST : candidate + 1;
                if (!conflicts(address, candidate)) {
                    port = candidate;
                    break;
                }
            }
            if (port == 0) {
                throw new BindException("no free ephemeral port for " + address + " on the loopback fabric");
            }
        } else if (conflicts(address, port)) {
            throw new BindException("Address already in use: " + requested + " on the loopback fabric");
        }
        InetSocketAddress bound = new InetSocketAddress(address, port);
        BY_PORT.computeIfAbsent(port, p -> new ArrayList<>(2)).add(id);
        return bound;
    }

    private static boolean conflicts(InetAddress address, int port) {
        List<LoopbackCmId> ids = BY_PORT.get(port);
        if (ids == null) {
            return false;
        }
        for (LoopbackCmId other : ids) {
            InetAddress taken = other.boundAddress().getAddress();
            if (taken.isAnyLocalAddress() || address.isAnyLocalAddress() || taken.equals(address)) {
                return true;
            }
        }
        return false;
    }

    static void unbind(LoopbackCmId id) {
        assert Thread.holdsLock(LOCK);
        InetSocketAddress bound = id.boundAddress();
        List<LoopbackCmId> ids = BY_PORT.get(bound.getPort());
        if (ids != null) {
            ids.remove(id);
            if (ids.isEmpty()) {
                BY_PORT.remove(bound.getPort());
            }
        }
    }

    /** The listening id that accepts connects to {@code remote}: bound to it exactly, or to the wildcard. */
    static LoopbackCmId listenerFor(InetSocketAddress remote) {
        assert Thread.holdsLock(LOCK);
        List<LoopbackCmId> ids = BY_PORT.get(remote.getPort());
        if (ids == null) {
            return null;
        }
        for (LoopbackCmId id : ids) {
            InetAddress taken = id.boundAddress().getAddress();
            if (id.isListening() && (taken.isAnyLocalAddress() || taken.equals(remote.getAddress()))) {
                return id;
            }
        }
        return null;
    }
}
