package io.rdmanio.core.resolver;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The fabric endpoints a client needs to reach a listener: any of shm, disni and loopback. Immutable.
 *
 * @param shmHost          shm: the listener's host identity; {@code null} with a rendezvous means "this host"
 *                         (a static file cannot know the boot id)
 * @param shmRendezvous    shm: the address the listener's rendezvous socket is named after, or {@code null}
 * @param disni            disni: the address and port of the listener on the RDMA interface, or {@code null}
 * @param loopbackProcess  loopback: the identity of the listener's JVM, or {@code null}
 */
public record Endpoints(HostIdentity shmHost, InetSocketAddress shmRendezvous, InetSocketAddress disni,
                        UUID loopbackProcess) {

    public static final int FABRIC_SHM = 1;
    public static final int FABRIC_DISNI = 2;
    public static final int FABRIC_LOOPBACK = 4;

    /** This JVM's identity, for the in-JVM loopback fabric. */
    public static final UUID THIS_PROCESS = UUID.randomUUID();

    public static Endpoints shm(HostIdentity host, InetSocketAddress rendezvous) {
        return new Endpoints(host, rendezvous, null, null);
    }

    public static Endpoints disni(InetSocketAddress rdmaAddress) {
        return new Endpoints(null, null, rdmaAddress, null);
    }

    public static Endpoints loopback() {
        return new Endpoints(null, null, null, THIS_PROCESS);
    }

    /** The fabric bits ({@link #FABRIC_SHM}, ...). */
    public int fabrics() {
        return (shmRendezvous != null ? FABRIC_SHM : 0) | (disni != null ? FABRIC_DISNI : 0)
            | (loopbackProcess != null ? FABRIC_LOOPBACK : 0);
    }

    /** The fabric names this listener is reachable on, preferred first: disni, shm, loopback. */
    public List<String> fabricNames() {
        List<String> names = new ArrayList<>(3);
        if (disni != null) {
            names.add("disni");
        }
        if (shmRendezvous != null) {
            names.add("shm");
        }
        if (loopbackProcess != null) {
            names.add("loopback");
        }
        return names;
    }

    /**
     * Whether a client with host identity {@code local} (may be {@code null}) can reach the shm endpoint: same
     * kernel and same shm directory. Without a recorded host identity the endpoint is taken to be on this host.
     */
    public boolean shmReachableFrom(HostIdentity local) {
        if (shmRendezvous == null) {
            return false;
        }
        return shmHost == null || shmHost.equals(local);
    }

    /** Whether the loopback endpoint is in this JVM. */
    public boolean loopbackReachable() {
        return THIS_PROCESS.equals(loopbackProcess);
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder();
        if (disni != null) {
            s.append("disni ").append(disni.getAddress().getHostAddress()).append(':').append(disni.getPort());
        }
        if (shmRendezvous != null) {
            s.append(s.length() == 0 ? "" : ", ").append("shm ")
                .append(shmRendezvous.getAddress().getHostAddress()).append(':').append(shmRendezvous.getPort())
                .append(shmHost == null ? " on this host" : " on " + shmHost);
        }
        if (loopbackProcess != null) {
            s.append(s.length() == 0 ? "" : ", ").append("loopback in JVM ").append(loopbackProcess);
        }
        return s.length() == 0 ? "no fabric" : s.toString();
    }
}
