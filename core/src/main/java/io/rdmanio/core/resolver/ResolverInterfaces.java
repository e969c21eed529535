package io.rdmanio.core.resolver;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Where the broadcast resolver can reach peers, per network interface: the IPv4 subnet broadcast address (the one
 * the interface reports, else the directed broadcast computed from the prefix), the IPv6 multicast group, and why
 * neither works on an interface (down, point-to-point, a /31 or /32 prefix, no multicast). One place decides this
 * for the resolver's sends and for the doctor's report, so the two cannot disagree.
 *
 * <p>Stateless and thread-safe; {@link #system()} reads the interfaces afresh at each call.
 */
public final class ResolverInterfaces {

    /**
     * The IPv6 group every responder joins on each multicast interface: link-local scope (it never leaves the
     * link), transient (flag T, not an IANA assignment), group id "RDRS". Multicast, unlike unicast to a port that
     * several sockets share, reaches every process on the host that joined, with IPV6_MULTICAST_LOOP on.
     */
    public static final InetAddress GROUP6 = group6();

    /** The IPv4 broadcast that every socket on this host bound to the port hears (dual-stack sockets too). */
    public static final InetAddress LOOPBACK_BROADCAST = loopbackBroadcast();

    /**
     * One address of an interface.
     *
     * @param address   the address
     * @param prefix    its network prefix length
     * @param broadcast the broadcast address the kernel reports, or {@code null} (none, or IPv6)
     */
    public record Address(InetAddress address, int prefix, InetAddress broadcast) {
    }

    /** One network interface as the resolver sees it. */
    public record Nic(String name, int index, boolean up, boolean loopback, boolean pointToPoint, boolean multicast,
                      List<Address> addresses) {

        public Nic {
            addresses = List.copyOf(addresses);
        }

        /** Whether the IPv6 group can be sent to and joined on it: up, multicast, not loopback, with IPv6. */
        public boolean multicast6() {
            if (!up || loopback || !multicast) {
                return false;
            }
            for (Address a : addresses) {
                if (a.address instanceof Inet6Address) {
                    return true;
                }
            }
            return false;
        }

        /** The IPv6 group scoped to this interface. */
        public InetAddress group6() {
            try {
                return Inet6Address.getByAddress(null, GROUP6.getAddress(), index);
            } catch (UnknownHostException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private ResolverInterfaces() {
    }

    /** Every interface of this host (in this network namespace), or none when they cannot be listed. */
    public static List<Nic> system() {
        List<Nic> out = new ArrayList<>();
        try {
            for (NetworkInterface ni : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                Nic n = of(ni);
                if (n != null) {
                    out.add(n);
                }
            }
        } catch (SocketException e) {
            // Loss is not an error here: no interface means unicast only, and the doctor says so.
        }
        return out;
    }

    /** The interface {@code name}, or {@code null} when there is none. */
    static Nic byName(String name) {
        try {
            NetworkInterface ni = NetworkInterface.getByName(name);
            return ni == null ? null : of(ni);
        } catch (SocketException e) {
            return null;
        }
    }

    /** The interface holding {@code local}, or {@code null}. */
    static Nic holding(InetAddress local) {
        try {
            NetworkInterface ni = NetworkInterface.getByInetAddress(local);
            return ni == null ? null : of(ni);
        } catch (SocketException e) {
            return null;
        }
    }

    private static Nic of(NetworkInterface ni) {
        try {
            List<Address> as = new ArrayList<>();
            for (InterfaceAddress ia : ni.getInterfaceAddresses()) {
                as.add(new Address(ia.getAddress(), ia.getNetworkPrefixLength(), ia.getBroadcast()));
            }
            return new Nic(ni.getName(), ni.getIndex(), ni.isUp(), ni.isLoopback(), ni.isPointToPoint(),
                ni.supportsMulticast(), as);
        } catch (SocketException e) {
            return null;
        }
    }

    /**
     * The IPv4 broadcast address for {@code a} on {@code nic}: the one the interface reports, else the directed
     * broadcast of its prefix (an address added without one, as {@code ip addr add 10.1.2.3/24 dev X} does, still
     * has the kernel's broadcast route for it); {@code null} for IPv6, a point-to-point link, or a /31 or /32 prefix.
     */
    public static InetAddress broadcast(Nic nic, Address a) {
        if (!(a.address instanceof Inet4Address) || nic.pointToPoint) {
            return null;
        }
        InetAddress reported = a.broadcast;
        if (reported != null && !reported.isAnyLocalAddress()) {
            return reported;
        }
        if (a.prefix < 0 || a.prefix >= 31) {
            return null;
        }
        byte[] b = a.address.getAddress();
        int bits = 0;
        for (byte x : b) {
            bits = (bits << 8) | (x & 0xff);
        }
        bits |= (int) (0xffffffffL >>> a.prefix);
        try {
            return InetAddress.getByAddress(new byte[] {(byte) (bits >>> 24), (byte) (bits >>> 16),
                (byte) (bits >>> 8), (byte) bits});
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Whether {@code x} is in the subnet of {@code a}. */
    static boolean sameSubnet(Address a, InetAddress x) {
        byte[] p = a.address.getAddress();
        byte[] q = x.getAddress();
        if (p.length != q.length) {
            return false;
        }
        int bits = a.prefix;
        for (int i = 0; i < p.length && bits > 0; i++, bits -= 8) {
            int mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
            if ((p[i] & mask) != (q[i] & mask)) {
                return false;
            }
        }
        return true;
    }

    /**
     * For people: what the resolver can do on each interface in use ({@code rdmanio.resolver.interfaces}, else every
     * interface), and, where it cannot work, why and what to do.
     */
    public static List<String> report(ResolverSettings settings, List<Nic> nics) {
        List<String> out = new ArrayList<>();
        if (!settings.broadcast()) {
            out.add("resolver: rdmanio.resolver.broadcast=false: no UDP; only the static file and directory "
                + "backends answer");
            return out;
        }
        List<Nic> used = new ArrayList<>();
        if (settings.interfaces().isEmpty()) {
            used.addAll(nics);
        } else {
            for (String name : settings.interfaces()) {
                Nic found = null;
                for (Nic n : nics) {
                    if (n.name.equals(name)) {
                        found = n;
                    }
                }
                if (found == null) {
                    out.add("resolver interface " + name + ": does not exist (named in "
                        + ResolverSettings.INTERFACES + "): the resolver cannot work on it");
                } else {
                    used.add(found);
                }
            }
        }
        for (Nic n : used) {
            String p = "resolver interface " + n.name + ": ";
            if (!n.up) {
                out.add(p + "down: the resolver cannot work on it until it is up");
                continue;
            }
            if (n.loopback) {
                out.add(p + "loopback: queries for this host's addresses (IPv4 and IPv6) go to "
                    + LOOPBACK_BROADCAST.getHostAddress() + ", which every rdmanio process on this host hears");
                continue;
            }
            if (n.addresses.isEmpty()) {
                out.add(p + "no address: the resolver cannot work on it");
                continue;
            }
            List<String> v6 = new ArrayList<>();
            for (Address a : n.addresses) {
                String at = a.address.getHostAddress().replaceAll("%.*", "") + "/" + a.prefix;
                if (a.address instanceof Inet6Address) {
                    if (!a.address.isLinkLocalAddress()) {
                        v6.add(at);
                    }
                    continue;
                }
                InetAddress b = broadcast(n, a);
                if (b != null) {
                    boolean computed = a.broadcast == null || a.broadcast.isAnyLocalAddress();
                    out.add(p + at + ": broadcast " + b.getHostAddress() + (computed ? ", computed from the /"
                        + a.prefix + " prefix (the address has no broadcast address set)" : ""));
                } else {
                    out.add(p + at + ": cannot broadcast: " + (n.pointToPoint ? "a point-to-point link"
                        : "a /" + a.prefix + " prefix has no broadcast address") + "; peers on it are asked by unicast,"
                        + " which reaches only one rdmanio process on their host (list them in "
                        + ResolverSettings.FILE + ")");
                }
            }
            if (!v6.isEmpty()) {
                String at = String.join(", ", v6);
                if (n.multicast6()) {
                    out.add(p + at + ": IPv6 multicast " + GROUP6.getHostAddress() + " (every rdmanio process on the"
                        + " link and on this host)");
                } else {
                    out.add(p + at + ": cannot multicast: " + (n.pointToPoint ? "a point-to-point link"
                        : "the interface has no MULTICAST flag") + "; IPv6 peers on it are asked by unicast, which"
                        + " reaches only one rdmanio process on their host (list them in " + ResolverSettings.FILE
                        + ")");
                }
            }
        }
        return out;
    }

    private static InetAddress group6() {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) 0xff, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                0x52, 0x44, 0x52, 0x53});
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private static InetAddress loopbackBroadcast() {
        try {
            return InetAddress.getByAddress(new byte[] {127, (byte) 255, (byte) 255, (byte) 255});
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
