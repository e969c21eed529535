package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.Engines;
import io.rdmanio.core.resolver.Endpoints;
import io.rdmanio.core.resolver.HostIdentity;
import io.rdmanio.core.resolver.Resolution;
import io.rdmanio.core.resolver.Resolver;
import io.rdmanio.core.resolver.ResolverPacketDescriptor;
import io.rdmanio.core.resolver.ResolverSettings;
import io.rdmanio.selector.RdmaSelectorProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code connect * * auto} with the resolver deciding: a listener bound through rdmanio registers itself and is
 * reached over its fabric; a plain TCP server is reached over TCP, and the second connect to it asks nobody.
 */
class AutoResolverTest {

    private Resolver resolver;
    private AutoRouting auto;
    private RdaSetup setup;

    private record RdaSetup(RdmaSelectorProvider provider, FabricChoice engines) {
    }

    private static int freeUdpPort() throws IOException {
        try (DatagramSocket s = new DatagramSocket(0)) {
            return s.getLocalPort();
        }
    }

    @BeforeEach
    void start() throws Exception {
        resolver = new Resolver(ResolverSettings.DEFAULT.withPort(freeUdpPort()).withTiming(200, 2));
        auto = AutoRouting.with("loopback", SystemFabrics.INSTANCE, resolver);
        setup = setup(resolver);
    }

    private static RdaSetup setup(Resolver r) {
        AutoRouting a = AutoRouting.with("loopback", SystemFabrics.INSTANCE, r);
        Rules rules = Rules.parse("test.rules", "bind 127.0.0.1 * auto\nconnect 127.0.0.1 * auto\n",
            InetAddress::getAllByName);
        FabricChoice engines = new FabricChoice("loopback", SystemFabrics.INSTANCE, a);
        return new RdaSetup(new RdmaSelectorProvider(
            new RdmanioConfig(new ResolvingRouter(rules, a), engines, "loopback", null)), engines);
    }

    @AfterEach
    void stop() {
        resolver.close();
    }

    private static void echo(SocketChannel c, SocketChannel a) throws IOException {
        c.write(ByteBuffer.wrap(new byte[] {42}));
        ByteBuffer one = ByteBuffer.allocate(1);
        while (one.hasRemaining()) {
            if (a.read(one) < 0) {
                throw new IOException("EOF");
            }
        }
        assertEquals(42, one.get(0));
    }

    @Test
    void aRegisteredListenerIsReachedOverItsFabricAndATcpServerOverTcp() throws Exception {
        try (ServerSocketChannel server = setup.provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            InetSocketAddress address = (InetSocketAddress) server.getLocalAddress();
            Resolution registered = resolver.resolve(address);
            assertTrue(registered.found(), registered.toString());
            assertEquals(Endpoints.loopback(), registered.endpoints());

            try (SocketChannel c = setup.provider.openSocketChannel()) {
                c.connect(address);
                assertTrue(c.toString().contains("loopback"), c.toString());
                try (SocketChannel a = server.accept()) {
                    echo(c, a);
                }
            }
        }

        try (ServerSocketChannel plain = ServerSocketChannel.open()) {
            plain.bind(new InetSocketAddress("127.0.0.1", 0));
            InetSocketAddress address = (InetSocketAddress) plain.getLocalAddress();
            for (int i = 0; i < 2; i++) {
                try (SocketChannel c = setup.provider.openSocketChannel()) {
                    c.connect(address);
                    assertFalse(c.toString().contains("loopback"), c.toString());
                    try (SocketChannel a = plain.accept()) {
                        echo(c, a);
                    }
                }
            }
            assertEquals(1, (long) resolver.stats().snapshot().get("misses"), resolver.stats().toString());
            assertEquals(1, (long) resolver.stats().snapshot().get("negativeHits"), "the second connect paid nothing");
        }
    }

    @Test
    void closingTheListenerWithdrawsIt() throws Exception {
        InetSocketAddress address;
        try (ServerSocketChannel server = setup.provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            address = (InetSocketAddress) server.getLocalAddress();
            assertTrue(resolver.resolve(address).found());
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        // The entry read once per check: it may go between two reads.
        for (Resolution r = resolver.cached(address); r != null && r.found(); r = resolver.cached(address)) {
            assertTrue(System.nanoTime() < deadline, "the withdrawal did not reach the cache");
            Thread.sleep(5);
        }
        assertFalse(resolver.resolve(address).found());
    }

    @Test
    void aFailedFabricConnectInvalidatesTheEntryAndFallsBackToTcp(@TempDir Path dir) throws Exception {
        try (ServerSocketChannel plain = ServerSocketChannel.open()) {
            plain.bind(new InetSocketAddress("127.0.0.1", 0));
            InetSocketAddress address = (InetSocketAddress) plain.getLocalAddress();
            // A stale answer: the static file says a loopback listener serves the address, but none does.
            Path file = dir.resolve("stale.conf");
            Files.writeString(file, "127.0.0.1:" + address.getPort() + " loopback\n");
            try (Resolver stale = new Resolver(new ResolverSettings(freeUdpPort(), 200, 2, 60, 10, null, List.of(),
                    200, file, false))) {
                RdaSetup s = setup(stale);
                assertTrue(stale.resolve(address).found());
                try (SocketChannel c = s.provider.openSocketChannel()) {
                    c.connect(address);
                    assertFalse(c.toString().contains("loopback"), c.toString());
                    try (SocketChannel a = plain.accept()) {
                        echo(c, a);
                    }
                }
                assertEquals(1L, (long) stale.stats().snapshot().get("invalidations"), stale.stats().toString());
                assertEquals(null, stale.cached(address), "the stale entry is gone");
            }
        }
    }

    @Test
    void oneForgedAnnouncementDoesNotKeepAutoConnectsOffTheFabric() throws Exception {
        try (ServerSocketChannel server = setup.provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            InetSocketAddress address = (InetSocketAddress) server.getLocalAddress();
            assertTrue(resolver.resolve(address).found());
            // Unsigned, from a plain UDP socket: a disni endpoint (of no use under rdmanio.fabric=loopback) with the
            // highest incarnation there is.
            InetSocketAddress evil = new InetSocketAddress("10.66.6.6", 666);
            forgeAnnouncement(resolver.settings().port(), address, evil, -1L);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!evil.equals(resolver.cached(address).endpoints().disni())) {
                assertTrue(System.nanoTime() < deadline, "the forged announcement did not arrive");
                Thread.sleep(5);
            }
            try (SocketChannel c = setup.provider.openSocketChannel()) {
                c.connect(address);
                assertTrue(c.toString().contains("loopback"), "asked again, the real listener answered: " + c);
                try (SocketChannel a = server.accept()) {
                    echo(c, a);
                }
            }
            assertEquals(1L, (long) resolver.stats().snapshot().get("reasked"), resolver.stats().toString());
            assertEquals(Endpoints.loopback(), resolver.cached(address).endpoints());
        }
    }

    /** An unsigned ANNOUNCE of a disni endpoint for {@code address}, to every responder on this host. */
    static void forgeAnnouncement(int port, InetSocketAddress address, InetSocketAddress disni, long incarnation)
            throws IOException {
        int type = ResolverPacketDescriptor.TYPE_ANNOUNCE;
        ByteBuffer b = ByteBuffer.allocate(ResolverPacketDescriptor.packetLength(type, 1, false));
        b.putInt(ResolverPacketDescriptor.MAGIC_OFFSET, ResolverPacketDescriptor.MAGIC);
        b.put(ResolverPacketDescriptor.VERSION_OFFSET, (byte) ResolverPacketDescriptor.VERSION);
        b.put(ResolverPacketDescriptor.TYPE_OFFSET, (byte) type);
        b.put(ResolverPacketDescriptor.COUNT_OFFSET, (byte) 1);
        b.putLong(ResolverPacketDescriptor.NONCE_OFFSET, System.nanoTime() | 1);
        b.putLong(ResolverPacketDescriptor.TIMESTAMP_OFFSET, System.currentTimeMillis());
        int at = ResolverPacketDescriptor.HEADER_LENGTH;
        putMapped(b, at + ResolverPacketDescriptor.EP_ADDRESS_OFFSET, address.getAddress());
        b.putShort(at + ResolverPacketDescriptor.EP_PORT_OFFSET, (short) address.getPort());
        b.put(at + ResolverPacketDescriptor.EP_FABRICS_OFFSET, (byte) Endpoints.FABRIC_DISNI);
        b.putLong(at + ResolverPacketDescriptor.EP_INCARNATION_OFFSET, incarnation);
        putMapped(b, at + ResolverPacketDescriptor.EP_DISNI_ADDRESS_OFFSET, disni.getAddress());
        b.putShort(at + ResolverPacketDescriptor.EP_DISNI_PORT_OFFSET, (short) disni.getPort());
        try (DatagramSocket s = new DatagramSocket()) {
            s.setBroadcast(true);
            s.send(new java.net.DatagramPacket(b.array(), b.capacity(),
                new InetSocketAddress("127.255.255.255", port)));
        }
    }

    private static void putMapped(ByteBuffer b, int at, InetAddress a) {
        byte[] v4 = a.getAddress();
        b.put(at + 10, (byte) 0xff).put(at + 11, (byte) 0xff);
        for (int i = 0; i < 4; i++) {
            b.put(at + 12 + i, v4[i]);
        }
    }

    @Test
    void theChoiceNamesWhyAFabricCannotBeUsed() {
        InetSocketAddress a = new InetSocketAddress("10.231.0.9", 9000);
        HostIdentity elsewhere = new HostIdentity(UUID.randomUUID(), 1, 2);
        AutoRouting.Choice shm = auto.choose(new Resolution(a, Endpoints.shm(elsewhere, a), 1, "test"));
        assertEquals(null, shm.fabric());
        assertTrue(shm.why().contains("shm: the listener is on host[boot " + elsewhere.bootId()), shm.why());
        AutoRouting.Choice disni = auto.choose(new Resolution(a, Endpoints.disni(a), 1, "test"));
        assertTrue(disni.why().contains("disni: rdmanio.fabric=loopback"), disni.why());
        AutoRouting.Choice none = auto.choose(Resolution.none(a, "no answer after 200 ms"));
        assertTrue(none.why().contains("no answer after 200 ms"), none.why());
    }

    @Test
    void theDoctorSaysWhatTheResolverAnswersAndWhy() throws Exception {
        Engine loopback = Engines.get("loopback");
        InetSocketAddress served = new InetSocketAddress("127.0.0.1", freeUdpPort());
        resolver.register(served, Endpoints.loopback(), 77);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int exit = Doctor.resolve("loopback", SystemFabrics.INSTANCE, () -> resolver,
            List.of("127.0.0.1:" + served.getPort(), "127.0.0.1:1"), new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, exit, out);
        assertTrue(out.contains("would use: loopback to /127.0.0.1:" + served.getPort()), out);
        assertTrue(out.contains("127.0.0.1:1: no fabric listener [no answer after"), out);
        assertTrue(out.contains("would use: tcp, because no fabric listener"), out);
        assertTrue(out.contains("resolver counters: resolves=2"), out);
        assertTrue(loopback.fabricName().equals("loopback"));
    }
}
