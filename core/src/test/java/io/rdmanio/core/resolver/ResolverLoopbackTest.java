package io.rdmanio.core.resolver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.resolver.ResolverCodec.Entry;
import io.rdmanio.core.resolver.ResolverCodec.Packet;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Responder and querier in one JVM, on 127.0.0.0/8 (broadcast to 127.255.255.255 reaches every responder). */
class ResolverLoopbackTest {

    private static final byte[] KEY = "a shared cluster key, 32 bytes..".getBytes(StandardCharsets.UTF_8);
    /**
     * The budget, over three tries, of a resolver whose lookups are to find something. The first query and answer
     * of fresh resolvers (in the first test of the JVM: class loading, the interpreter) take a few ms on an idle
     * 2-core machine but more than 300 ms, the budget every resolver here had, with two busy loops beside the
     * test, and a served address came back none. A find returns at its answer, so this costs nothing when idle.
     */
    private static final int FIND_MILLIS = 2000;
    /**
     * The budget of a resolver whose lookups are to find nothing: a miss waits all of it, and a slow machine
     * cannot turn a miss into a find, so it stays short.
     */
    private static final int MISS_MILLIS = 300;

    private final List<AutoCloseable> closeMe = new ArrayList<>();
    private final int port = freeUdpPort();
    private final InetSocketAddress served = new InetSocketAddress("127.0.0.1", freeUdpPort());
    private final Endpoints endpoints = Endpoints.disni(new InetSocketAddress("192.168.77.1", served.getPort()));

    static int freeUdpPort() {
        try (DatagramSocket s = new DatagramSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Settings for a resolver that is to find what it looks up (and for one that only serves). */
    private ResolverSettings settings() {
        return ResolverSettings.DEFAULT.withPort(port).withTiming(FIND_MILLIS, 2);
    }

    /** Settings for a resolver whose lookups are to miss. */
    private ResolverSettings missSettings() {
        return ResolverSettings.DEFAULT.withPort(port).withTiming(MISS_MILLIS, 2);
    }

    private Resolver open(ResolverSettings s, DatagramPort.Factory f) throws IOException {
        Resolver r = new Resolver(s, f);
        closeMe.add(r);
        return r;
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : closeMe) {
            c.close();
        }
    }

    /**
     * Whether {@code resolver} holds a positive entry for {@code address}, read once: the entry may go between two
     * reads (a withdrawal, an expiry), so a check that reads it twice can meet null the second time.
     */
    static boolean cachedFound(Resolver resolver, InetSocketAddress address) {
        Resolution r = resolver.cached(address);
        return r != null && r.found();
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        await(() -> what, condition);
    }

    static void await(java.util.function.Supplier<String> what, BooleanSupplier condition)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out waiting for " + what.get());
            }
            Thread.sleep(5);
        }
    }

    @Test
    void aRegisteredAddressIsFoundAndAnUnservedOneIsNot() throws Exception {
        Resolver server = open(settings(), DatagramPort.SYSTEM);
        Resolver client = open(settings(), DatagramPort.SYSTEM);
        long inc = Resolver.newIncarnation();
        server.register(served, endpoints, inc);
        Resolution r = client.resolve(served);
        assertTrue(r.found(), r.toString());
        assertEquals(endpoints, r.endpoints());
        assertEquals(inc, r.incarnation());
        assertTrue(r.source().startsWith("answer from"), r.source());

        // The miss is asked by a resolver of the short budget, which a miss waits in full.
        Resolver asker = open(missSettings(), DatagramPort.SYSTEM);
        InetSocketAddress nobody = new InetSocketAddress("127.0.0.1", freeUdpPort());
        Resolution miss = asker.resolve(nobody);
        assertFalse(miss.found());
        long sent = asker.stats().queriesSent.sum() + asker.stats().retriesSent.sum();
        Resolution again = asker.resolve(nobody);
        assertFalse(again.found());
        assertEquals(sent, asker.stats().queriesSent.sum() + asker.stats().retriesSent.sum(),
            "the negative cache answers the second resolve without a query");
        assertEquals(1, asker.stats().negativeHits.sum());
    }

    @Test
    void anShmEndpointWithoutAHostIdentityIsRefusedWhenRegistered() throws Exception {
        Resolver server = open(settings(), DatagramPort.SYSTEM);
        // Its record would be dropped as malformed by every peer: the address would look unserved everywhere.
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> server.register(served, Endpoints.shm(null, served), 1));
        assertTrue(e.getMessage().contains("names no host identity"), e.getMessage());
        assertEquals(0, server.stats().announcesSent.sum(), "nothing was announced");
        assertEquals(null, server.cached(served));
    }

    @Test
    void anAnnouncementReplacesANegativeEntryAndAWithdrawalRemovesIt() throws Exception {
        Resolver server = open(settings(), DatagramPort.SYSTEM);
        // Its one lookup is to miss: the short budget.
        Resolver client = open(missSettings(), DatagramPort.SYSTEM);
        // The client must listen on the well-known port to hear announcements: it registers something of its own.
        client.register(new InetSocketAddress("127.0.0.1", freeUdpPort()), endpoints, 1);
        assertFalse(client.resolve(served).found());
        long inc = Resolver.newIncarnation();
        server.register(served, endpoints, inc);
        await("the announcement", () -> cachedFound(client, served));
        server.unregister(served);
        // Unsigned, the withdrawal only forgets the entry (the next connect asks) rather than recording a miss.
        await("the withdrawal", () -> !cachedFound(client, served));
    }

    @Test
    void withoutAKeyOneForgedAnnouncementDoesNotPinTheEntry() throws Exception {
        Resolver server = open(settings(), DatagramPort.SYSTEM);
        Resolver client = open(settings(), DatagramPort.SYSTEM);
        long inc = Resolver.newIncarnation();
        server.register(served, endpoints, inc);
        assertEquals(endpoints, client.resolve(served).endpoints());

        // One well-formed unsigned announcement with the highest incarnation there is, from a plain UDP socket.
        forgeAnnouncement(-1L);
        await(() -> "the forged announcement to arrive: " + client.cached(served),
            () -> Forger.EVIL.equals(client.cached(served).endpoints()));
        Resolution forged = client.cached(served);
        assertEquals(Resolution.Origin.ANNOUNCEMENT, forged.origin());
        assertFalse(forged.verified());

        // Asked again (as an auto connect does when the announced endpoint is of no use here), the real listener's
        // answer replaces it, although its incarnation is smaller.
        Resolution again = client.reask(served, forged);
        assertEquals(endpoints, again.endpoints(), again.toString());
        assertEquals(inc, again.incarnation());
        assertEquals(endpoints, client.cached(served).endpoints());
        assertEquals(1, client.stats().reasked.sum());

        // And the real listener's next announcement replaces a forged entry too.
        forgeAnnouncement(-2L);
        await(() -> "the second forged announcement: " + client.cached(served),
            () -> Forger.EVIL.equals(client.cached(served).endpoints()));
        server.register(served, endpoints, inc);
        await(() -> "the real announcement to replace the forged one: " + client.cached(served),
            () -> endpoints.equals(client.cached(served).endpoints()));
    }

    @Test
    void withAKeyAnUnsignedAnnouncementChangesNothing() throws Exception {
        Resolver server = open(settings().withKey(KEY), DatagramPort.SYSTEM);
        Resolver client = open(settings().withKey(KEY), DatagramPort.SYSTEM);
        long inc = Resolver.newIncarnation();
        server.register(served, endpoints, inc);
        Resolution real = client.resolve(served);
        assertEquals(Resolution.Origin.SIGNED, real.origin());
        long unsignedBefore = client.stats().unsigned.sum();
        forgeAnnouncement(-1L);
        await(() -> "the unsigned announcement counted: " + client.stats(),
            () -> client.stats().unsigned.sum() > unsignedBefore);
        assertEquals(endpoints, client.cached(served).endpoints());
        assertEquals(real, client.reask(served, real), "a signed answer is not asked again");
    }

    /** Sends an unsigned ANNOUNCE of {@link Forger#EVIL} for {@link #served} to every responder on this host. */
    private void forgeAnnouncement(long incarnation) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(ResolverPacketDescriptor.MAX_PACKET);
        int n = new ResolverCodec(null).encodeEntries(b, ResolverPacketDescriptor.TYPE_ANNOUNCE,
            new Random().nextLong() | 1, System.currentTimeMillis(), List.of(new Entry(served, Forger.EVIL,
                incarnation)), 0, 1);
        try (DatagramSocket s = new DatagramSocket()) {
            s.setBroadcast(true);
            s.send(new DatagramPacket(b.array(), n, new InetSocketAddress("127.255.255.255", port)));
        }
    }

    @Test
    void anIpv6LoopbackListenerIsFoundByAnotherResolverOnTheHost() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(ipv6Loopback(), "this host has no IPv6 loopback (::1)");
        InetSocketAddress v6 = new InetSocketAddress("::1", freeUdpPort());
        Resolver server = open(settings(), DatagramPort.SYSTEM);
        server.register(v6, endpoints, 41);
        // A bystander and then the client bind the shared port after the server: a unicast query to [::1]:port
        // would reach only one of the three sockets (the last bound, the client's own).
        Resolver bystander = open(settings(), DatagramPort.SYSTEM);
        bystander.register(new InetSocketAddress("::1", freeUdpPort()), endpoints, 42);
        Resolver client = open(settings(), DatagramPort.SYSTEM);
        Resolution r = client.resolve(v6);
        assertTrue(r.found(), "the client's query reached the server's responder: " + r + " " + client.stats());
        assertEquals(41, r.incarnation());
    }

    private static boolean ipv6Loopback() {
        try (DatagramSocket s = new DatagramSocket(new InetSocketAddress("::1", 0))) {
            return s.getLocalPort() > 0;
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void theGlobalRateLimitHoldsWhenSourceAddressesCycle() throws Exception {
        int global = 20;
        Resolver server = open(settings().withRateLimits(1000, global), DatagramPort.SYSTEM);
        server.register(served, endpoints, 7);
        ByteBuffer b = ByteBuffer.allocate(ResolverPacketDescriptor.MAX_PACKET);
        int n = new ResolverCodec(null).encodeQuery(b, 99, System.currentTimeMillis(), List.of(served), 0, 1);
        List<DatagramSocket> sources = new ArrayList<>();
        int queries = 0;
        long start = System.nanoTime();
        try {
            // 64 source addresses of 127.0.0.0/8 (all loopback), each sending 5 queries: 320 in all.
            for (int i = 0; i < 64; i++) {
                sources.add(new DatagramSocket(new InetSocketAddress("127.0.0." + (i + 2), 0)));
            }
            InetSocketAddress to = new InetSocketAddress("127.0.0.1", port);
            ResolverStats st = server.stats();
            for (int round = 0; round < 5; round++) {
                for (DatagramSocket s : sources) {
                    s.send(new DatagramPacket(b.array(), n, to));
                    queries++;
                }
                // Paced by rounds so that the responder's socket buffer does not overflow on a loaded machine; a
                // datagram lost anyway is not waited for beyond the deadline (loss is not an error for UDP).
                long sent = queries;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (st.queriesReceived.sum() < sent && System.nanoTime() - deadline < 0) {
                    Thread.sleep(1);
                }
            }
            // Every query that arrived is answered or held back.
            await(() -> "the queries to be handled: " + st, () -> st.queriesReceived.sum() > 0
                && st.queriesReceived.sum() == st.answersSent.sum() + st.rateLimited.sum() + st.rateLimitedGlobal.sum());
        } finally {
            for (DatagramSocket s : sources) {
                s.close();
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        ResolverStats st = server.stats();
        System.out.printf("global rate limit %d/s: %d queries from 64 sources, %d answered, %d held back in %.2f s%n",
            global, st.queriesReceived.sum(), st.answersSent.sum(), st.rateLimitedGlobal.sum(), seconds);
        assertEquals(0, st.rateLimited.sum(), "no source reached its own limit of 1000/s: " + st);
        // A bucket of `global` tokens refilled at `global` a second: never more answers than that over the run.
        assertTrue(st.answersSent.sum() <= global + global * seconds + 1, st + " over " + seconds + " s");
        assertTrue(st.rateLimitedGlobal.sum() > 0 || st.queriesReceived.sum() <= global + global * seconds,
            "more queries than the global bucket allows, and none held back: " + st);
    }

    @Test
    void theRateLimiterBoundsEverySourceAndAllTogetherWithBoundedMemory() {
        BroadcastBackend.RateLimiter limiter = new BroadcastBackend.RateLimiter(5, 100);
        long now = System.nanoTime();
        java.net.InetAddress one = java.net.InetAddress.getLoopbackAddress();
        int granted = 0;
        for (int i = 0; i < 10; i++) {
            granted += limiter.tryTake(one, now) == BroadcastBackend.RateLimiter.GRANTED ? 1 : 0;
        }
        assertEquals(5, granted, "one source gets its burst");
        // Ten thousand sources at one instant: the global bucket (100, 5 of them spent) bounds them all.
        for (int i = 0; i < 10_000; i++) {
            byte[] a = {10, (byte) (i >> 16), (byte) (i >> 8), (byte) i};
            try {
                granted += limiter.tryTake(java.net.InetAddress.getByAddress(a), now)
                    == BroadcastBackend.RateLimiter.GRANTED ? 1 : 0;
            } catch (java.net.UnknownHostException e) {
                throw new AssertionError(e);
            }
        }
        assertEquals(100, granted);
        assertTrue(limiter.sourcesTracked() <= BroadcastBackend.RATE_SOURCES, "sources tracked: "
            + limiter.sourcesTracked());
    }

    @Test
    void aRestartedListenerIsFoundWithItsNewIncarnation() throws Exception {
        Resolver client = open(settings(), DatagramPort.SYSTEM);
        long first;
        try (Resolver server = new Resolver(settings(), DatagramPort.SYSTEM)) {
            first = Resolver.newIncarnation();
            server.register(served, endpoints, first);
            assertEquals(first, client.resolve(served).incarnation());
        }
        client.invalidate(served);
        Resolver restarted = open(settings(), DatagramPort.SYSTEM);
        long second = Resolver.newIncarnation();
        restarted.register(served, endpoints, second);
        // The old listener's withdrawal may still be on its way and cache a miss; the restart's announcement (or the
        // next query after that miss expires) replaces it. Recovery is awaited, not assumed to be instant.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Resolution r = client.resolve(served);
        while (r.incarnation() != second && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
            r = client.resolve(served);
        }
        assertEquals(second, r.incarnation());
        assertTrue(Long.compareUnsigned(second, first) > 0);
    }

    @Test
    void manyAddressesResolveInOneBatch() throws Exception {
        Resolver server = open(settings(), DatagramPort.SYSTEM);
        List<InetSocketAddress> all = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            InetSocketAddress a = new InetSocketAddress("127.0.0.1", 20000 + i);
            all.add(a);
            if (i % 2 == 0) {
                server.register(a, endpoints, i + 1);
            }
        }
        // Half the batch is to miss, so the batch waits its whole budget: the short one, and a batch whose answers
        // came too late for it (a loaded machine) is asked again by a fresh client, up to 10 s. In every batch no
        // unserved address is found and one query goes out; the last must find every served one.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Map<InetSocketAddress, Resolution> got;
        int batches = 0;
        do {
            batches++;
            try (Resolver client = new Resolver(missSettings(), DatagramPort.SYSTEM)) {
                got = client.resolveAll(all);
                for (int i = 1; i < 100; i += 2) {
                    Resolution r = got.get(all.get(i));
                    assertFalse(r.found(), all.get(i) + " is served by nobody: " + r);
                }
                assertEquals(1, client.stats().queriesSent.sum(), "one resolve for all hundred");
            }
        } while (!allFound(got, all) && System.nanoTime() - deadline < 0);
        for (int i = 0; i < 100; i += 2) {
            assertTrue(got.get(all.get(i)).found(), all.get(i) + " in batch " + batches + ": " + got.get(all.get(i)));
        }
    }

    /** Whether every even-numbered address of {@code all} (the served ones) was found. */
    private static boolean allFound(Map<InetSocketAddress, Resolution> got, List<InetSocketAddress> all) {
        for (int i = 0; i < all.size(); i += 2) {
            if (!got.get(all.get(i)).found()) {
                return false;
            }
        }
        return true;
    }

    @Test
    void concurrentResolvesOfOneAddressShareOneQuery() throws Exception {
        Resolver server = open(settings(), DatagramPort.SYSTEM);
        Resolver client = open(settings(), DatagramPort.SYSTEM);
        server.register(served, endpoints, 3);
        List<Thread> threads = new ArrayList<>();
        List<Resolution> results = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < 16; i++) {
            Thread t = new Thread(() -> results.add(client.resolve(served)));
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join(10_000);
        }
        assertEquals(16, results.size());
        assertTrue(results.stream().allMatch(Resolution::found));
        assertTrue(client.stats().queriesSent.sum() <= 16);
    }

    @Test
    void withTheKeyAForgedAnswerIsIgnored() throws Exception {
        Resolver client = open(missSettings().withKey(KEY), DatagramPort.SYSTEM);
        try (Forger forger = new Forger(port, "not the cluster key, 32 bytes...".getBytes(StandardCharsets.UTF_8))) {
            Resolution r = missWhileAnswered(client, served, () -> client.stats().forged.sum());
            assertFalse(r.found(), "forged answer believed: " + r);
            assertTrue(forger.forgeries > 0, "the forger saw no query");
            assertTrue(client.stats().forged.sum() > 0, client.stats().toString());
        }
        try (Forger unsigned = new Forger(port, null)) {
            client.invalidate(served);
            assertFalse(missWhileAnswered(client, served, () -> client.stats().unsigned.sum()).found());
            assertTrue(client.stats().unsigned.sum() > 0, client.stats().toString());
        }
    }

    /**
     * Resolves {@code address}, which a forger answers and which must be missed, until the forger's answer arrived
     * while a resolve waited ({@code answers}, the client's count of such packets, grew during it): a miss whose
     * budget ended before the answer came proves nothing, and on a loaded machine the forger's thread may answer
     * after the short budget of a miss. Every resolve must miss; up to 10 s.
     */
    private static Resolution missWhileAnswered(Resolver client, InetSocketAddress address, LongSupplier answers) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            long before = answers.getAsLong();
            Resolution r = client.resolve(address);
            assertFalse(r.found(), "forged answer believed: " + r);
            if (answers.getAsLong() > before) {
                return r;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("no forged answer arrived during a resolve in 10 s: " + client.stats());
            }
            // The miss is cached: forget it, so that the next resolve asks again.
            client.invalidate(address);
        }
    }

    @Test
    void withoutTheKeyAForgedAnswerIsBelieved() throws Exception {
        // The documented risk of an unkeyed resolver: anyone on the subnet who sees the query can answer it.
        Resolver client = open(settings(), DatagramPort.SYSTEM);
        try (Forger forger = new Forger(port, null)) {
            Resolution r = client.resolve(served);
            assertTrue(r.found());
            assertEquals(Forger.EVIL, r.endpoints());
        }
    }

    @Test
    void malformedPacketsAreCountedAndTheResponderKeepsAnswering() throws Exception {
        Resolver server = open(settings(), DatagramPort.SYSTEM);
        server.register(served, endpoints, 3);
        Random random = new Random(7);
        try (DatagramSocket s = new DatagramSocket()) {
            InetSocketAddress to = new InetSocketAddress("127.0.0.1", port);
            for (int i = 0; i < 50; i++) {
                byte[] junk = new byte[1 + random.nextInt(200)];
                random.nextBytes(junk);
                s.send(new DatagramPacket(junk, junk.length, to));
            }
            ByteBuffer b = ByteBuffer.allocate(ResolverPacketDescriptor.MAX_PACKET);
            int n = new ResolverCodec(null).encodeQuery(b, 5, System.currentTimeMillis(), List.of(served), 0, 1);
            s.send(new DatagramPacket(b.array(), n - 3, to));
            byte[] big = new byte[4000];
            System.arraycopy(b.array(), 0, big, 0, n);
            s.send(new DatagramPacket(big, big.length, to));
        }
        await(() -> "51 malformed and 1 oversized counted: " + server.stats(), () -> server.stats().malformed.sum() == 51
            && server.stats().oversized.sum() == 1);
        Resolver client = open(settings(), DatagramPort.SYSTEM);
        assertTrue(client.resolve(served).found(), "the responder still answers");
    }

    @Test
    void resolvesSucceedWithinTheRetryBudgetDespiteLoss() throws Exception {
        // 30% loss on every send and receive of both ends: a round trip survives with 0.7^4 = 24%, so 6 tries
        // find it with 1 - 0.76^6 = 81% each; 40 addresses resolved one by one must mostly succeed.
        LossyPorts lossy = new LossyPorts(0.30, 42);
        Resolver server = open(settings(), lossy);
        Resolver client = open(settings().withTiming(2000, 5), lossy);
        int found = 0;
        for (int i = 0; i < 40; i++) {
            InetSocketAddress a = new InetSocketAddress("127.0.0.1", 30000 + i);
            server.register(a, endpoints, i + 1);
            long start = System.nanoTime();
            Resolution r = client.resolve(a);
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "bounded");
            found += r.found() ? 1 : 0;
        }
        assertTrue(lossy.dropped.get() > 0);
        assertTrue(found >= 26, "only " + found + " of 40 resolved through 30% loss; " + client.stats());
        assertTrue(client.stats().retriesSent.sum() > 0);
    }

    @Test
    void theStaticFileSettlesAddressesWithoutBroadcast(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("resolver.conf");
        Files.writeString(file, String.join("\n",
            "# address          fabrics",
            "10.9.0.5:9000      disni=192.168.9.5:9000,shm",
            "10.9.0.6:*         disni",
            "10.9.0.7:9000      tcp", ""));
        ResolverSettings s = new ResolverSettings(port, 100, 0, 60, 10, null, List.of(), 100, file, false);
        Resolver r = open(s, DatagramPort.SYSTEM);
        Resolution a = r.resolve(new InetSocketAddress("10.9.0.5", 9000));
        assertEquals(new InetSocketAddress("192.168.9.5", 9000), a.endpoints().disni());
        assertNotNull(a.endpoints().shmRendezvous());
        assertEquals(new InetSocketAddress("10.9.0.6", 4242),
            r.resolve(new InetSocketAddress("10.9.0.6", 4242)).endpoints().disni());
        Resolution tcp = r.resolve(new InetSocketAddress("10.9.0.7", 9000));
        assertFalse(tcp.found());
        assertTrue(tcp.source().contains("resolver.conf:4"), tcp.source());
        assertEquals(0, r.stats().queriesSent.sum());
    }

    @Test
    void aBadStaticFileNamesTheLine(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("bad.conf");
        Files.writeString(file, "10.9.0.5:9000 disni\n10.9.0.6:9000 carrier-pigeon\n");
        IOException e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class,
            () -> new StaticFileBackend(file));
        assertTrue(e.getMessage().contains("bad.conf:2") && e.getMessage().contains("carrier-pigeon"),
            e.getMessage());
    }

    /** Listens on the responder port and answers every query with endpoints of its own, signed with its key. */
    static final class Forger implements AutoCloseable {
        static final Endpoints EVIL = Endpoints.disni(new InetSocketAddress("10.66.6.6", 666));
        final DatagramSocket socket;
        final Thread thread;
        volatile int forgeries;

        Forger(int port, byte[] key) throws IOException {
            socket = new DatagramSocket(null);
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(port));
            ResolverCodec codec = new ResolverCodec(key);
            ResolverCodec reader = new ResolverCodec(null);
            thread = new Thread(() -> {
                byte[] in = new byte[2048];
                ByteBuffer out = ByteBuffer.allocate(ResolverPacketDescriptor.MAX_PACKET);
                while (!socket.isClosed()) {
                    try {
                        DatagramPacket p = new DatagramPacket(in, in.length);
                        socket.receive(p);
                        // Read the query without checking its signature: the nonce is in the clear.
                        ByteBuffer b = ByteBuffer.wrap(in);
                        int n = p.getLength() - ((b.get(ResolverPacketDescriptor.FLAGS_OFFSET) & 1) != 0
                            ? ResolverPacketDescriptor.MAC_LENGTH : 0);
                        b.put(ResolverPacketDescriptor.FLAGS_OFFSET, (byte) 0);
                        Packet q = reader.decode(b, n, System.currentTimeMillis());
                        List<Entry> lies = new ArrayList<>();
                        for (InetSocketAddress a : q.queried()) {
                            lies.add(new Entry(a, EVIL, Long.MAX_VALUE));
                        }
                        int len = codec.encodeEntries(out, ResolverPacketDescriptor.TYPE_ANSWER, q.nonce(),
                            System.currentTimeMillis(), lies, 0, lies.size());
                        socket.send(new DatagramPacket(out.array(), len, p.getSocketAddress()));
                        forgeries++;
                    } catch (Exception e) {
                        // closed, or not a query: keep listening
                    }
                }
            }, "forger");
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void close() throws InterruptedException {
            socket.close();
            thread.join(5000);
        }
    }
}
