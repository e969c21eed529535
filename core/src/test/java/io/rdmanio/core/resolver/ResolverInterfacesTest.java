package io.rdmanio.core.resolver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.resolver.ResolverInterfaces.Address;
import io.rdmanio.core.resolver.ResolverInterfaces.Nic;
import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResolverInterfacesTest {

    private static InetAddress ip(String s) throws Exception {
        return InetAddress.getByName(s);
    }

    private static Nic nic(boolean up, boolean p2p, boolean multicast, Address... as) {
        return new Nic("x0", 7, up, false, p2p, multicast, List.of(as));
    }

    @Test
    void anAddressWithoutABroadcastGetsTheDirectedBroadcastOfItsPrefix() throws Exception {
        Address none = new Address(ip("10.1.2.3"), 24, null);
        Address zero = new Address(ip("10.1.2.3"), 24, ip("0.0.0.0"));
        Address wide = new Address(ip("10.1.2.3"), 20, ip("0.0.0.0"));
        Nic n = nic(true, false, true, none);
        assertEquals(ip("10.1.2.255"), ResolverInterfaces.broadcast(n, none));
        assertEquals(ip("10.1.2.255"), ResolverInterfaces.broadcast(n, zero));
        assertEquals(ip("10.1.15.255"), ResolverInterfaces.broadcast(n, wide));
        Address set = new Address(ip("10.1.2.3"), 24, ip("10.1.2.127"));
        assertEquals(ip("10.1.2.127"), ResolverInterfaces.broadcast(n, set), "the interface's own is kept");
    }

    @Test
    void noBroadcastOnPointToPointLinksOrTinyPrefixesOrIpv6() throws Exception {
        Address a = new Address(ip("10.1.2.3"), 24, null);
        assertNull(ResolverInterfaces.broadcast(nic(true, true, false, a), a));
        Address p31 = new Address(ip("10.1.2.2"), 31, null);
        assertNull(ResolverInterfaces.broadcast(nic(true, false, true, p31), p31));
        Address p32 = new Address(ip("10.1.2.2"), 32, null);
        assertNull(ResolverInterfaces.broadcast(nic(true, false, true, p32), p32));
        Address v6 = new Address(ip("fd00::1"), 64, null);
        assertNull(ResolverInterfaces.broadcast(nic(true, false, true, v6), v6));
    }

    @Test
    void theGroupIsLinkLocalAndScopedToTheInterface() throws Exception {
        Nic n = nic(true, false, true, new Address(ip("fd00::1"), 64, null));
        assertTrue(ResolverInterfaces.GROUP6.isMCLinkLocal());
        assertTrue(n.multicast6());
        assertEquals(7, ((java.net.Inet6Address) n.group6()).getScopeId());
        assertTrue(!nic(true, false, false, new Address(ip("fd00::1"), 64, null)).multicast6());
        assertTrue(!nic(true, false, true, new Address(ip("10.0.0.1"), 24, null)).multicast6());
    }
}
