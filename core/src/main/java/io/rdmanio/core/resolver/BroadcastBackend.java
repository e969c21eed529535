package io.rdmanio.core.resolver;

import static io.rdmanio.core.resolver.ResolverPacketDescriptor.MAX_ENDPOINT_RECORDS;
import static io.rdmanio.core.resolver.ResolverPacketDescriptor.MAX_PACKET;
import static io.rdmanio.core.resolver.ResolverPacketDescriptor.MAX_QUERY_RECORDS;
import static io.rdmanio.core.resolver.ResolverPacketDescriptor.TYPE_ANNOUNCE;
import static io.rdmanio.core.resolver.ResolverPacketDescriptor.TYPE_ANSWER;
import static io.rdmanio.core.resolver.ResolverPacketDescriptor.TYPE_QUERY;
import static io.rdmanio.core.resolver.ResolverPacketDescriptor.TYPE_WITHDRAW;

import io.rdmanio.core.Logs;
import io.rdmanio.core.resolver.ResolverCodec.BadPacketException;
import io.rdmanio.core.resolver.ResolverCodec.Entry;
import io.rdmanio.core.resolver.ResolverCodec.Packet;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Inet6Address;
import java.net.NetworkInterface;
import java.net.SocketAddress;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * The broadcast resolver on UDP: queries are broadcast on the subnet of the route to the queried address (or on the
 * configured interfaces), the responder that serves an address answers by unicast, and listeners announce
 * themselves on bind and withdraw on close.
 *
 * <p>IPv4 uses broadcast, not multicast: a subnet broadcast needs no group join, no IGMP snooping set up on switches
 * and no multicast routing, and its reach (one IP subnet) is the reach of RDMA itself (an InfiniBand subnet, a RoCE
 * L2 domain). On IPoIB the kernel carries it as an InfiniBand broadcast-group datagram. An interface address without
 * a broadcast address gets the directed broadcast of its prefix ({@link ResolverInterfaces#broadcast}). IPv6 has
 * no broadcast: it uses the link-local group {@link ResolverInterfaces#GROUP6}, which every responder joins, so
 * that, like a broadcast and unlike unicast to a port several sockets share, it reaches every process on the
 * link and on this host. Queries about this host's own addresses also go to 127.255.255.255, which every
 * (dual-stack) responder on the host hears. An address beyond the local subnet is queried by unicast to its own
 * responder port, which reaches one process on that host.
 *
 * <p>Threads: one daemon thread per socket, each blocked in {@code receive} (no CPU when idle): the responder's
 * ({@code rdmanio-resolver-responder}, opened on the first registration or resolve) and the querier's
 * ({@code rdmanio-resolver-answers}, opened on the first resolve). Any thread may resolve, register and
 * unregister; sends are serialized by {@code sendLock}. Nothing here throws on a bad packet: it is counted and
 * dropped.
 */
final class BroadcastBackend implements ResolverBackend {

    private static final Logger LOG = Logs.get(BroadcastBackend.class);

    /** Announcements and withdrawals remembered to drop replays (by nonce). */
    private static final int RECENT_NONCES = 4096;
    /** Sources the per-source rate limiter remembers; the least recently seen is forgotten first. */
    static final int RATE_SOURCES = 4096;

    private final ResolverSettings settings;
    private final ResolverStats stats;
    private final ResolverCache cache;
    private final DatagramPort.Factory sockets;
    private final SecureRandom random = new SecureRandom();
    private final ConcurrentHashMap<Long, Pending> pending = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<InetSocketAddress, Registration> registrations = new ConcurrentHashMap<>();
    /** Interfaces (and families) already warned about: unicast only. */
    private final Set<String> unicastWarned = ConcurrentHashMap.newKeySet();

    // ---- guarded by sendLock (never held while waiting for answers)
    private final Object sendLock = new Object();
    private final ResolverCodec sendCodec;
    private final ByteBuffer sendBuffer = ByteBuffer.allocate(MAX_PACKET);
    private DatagramPort querySocket;
    private DatagramPort responderSocket;
    /** Interfaces whose IPv6 group the responder socket joined. */
    private final Set<String> joined = new java.util.HashSet<>();
    private boolean closed;

    private record Registration(Endpoints endpoints, long incarnation) {
    }

    BroadcastBackend(ResolverSettings settings, ResolverStats stats, ResolverCache cache,
                     DatagramPort.Factory sockets) {
        this.settings = settings;
        this.stats = stats;
        this.cache = cache;
        this.sockets = sockets;
        this.sendCodec = new ResolverCodec(settings.key());
    }

    @Override
    public String name() {
        return "broadcast";
    }

    // ------------------------------------------------------------------------------------------------ query side

    @Override
    public Map<InetSocketAddress, Resolution> resolve(Collection<InetSocketAddress> addresses, long budgetNanos)
            throws IOException {
        DatagramPort socket = ensureQuerySocket();
        long start = System.nanoTime();
        long deadline = start + budgetNanos;
        long nonce = nextNonce();
        Pending p = new Pending(addresses, start, settings.signed());
        pending.put(nonce, p);
        try {
            long wait = settings.firstWaitNanos();
            for (int attempt = 0; attempt <= settings.retries(); attempt++) {
                List<InetSocketAddress> open = p.unanswered();
                if (open.isEmpty()) {
                    break;
                }
                sendQueries(socket, nonce, open);
                (attempt == 0 ? stats.queriesSent : stats.retriesSent).increment();
                long now = System.nanoTime();
                if (p.await(Math.min(deadline, now + wait)) || System.nanoTime() - deadline >= 0) {
                    break;
                }
                wait *= 2;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            pending.remove(nonce);
        }
        return p.results();
    }

    private void sendQueries(DatagramPort socket, long nonce, List<InetSocketAddress> open) {
        Map<InetSocketAddress, List<InetSocketAddress>> byDestination = new LinkedHashMap<>();
        for (InetSocketAddress a : open) {
            for (InetSocketAddress d : destinations(a.getAddress())) {
                byDestination.computeIfAbsent(d, k -> new ArrayList<>()).add(a);
            }
        }
        synchronized (sendLock) {
            for (Map.Entry<InetSocketAddress, List<InetSocketAddress>> e : byDestination.entrySet()) {
                List<InetSocketAddress> list = e.getValue();
                for (int from = 0; from < list.size(); from += MAX_QUERY_RECORDS) {
                    int n = Math.min(MAX_QUERY_RECORDS, list.size() - from);
                    int length = sendCodec.encodeQuery(sendBuffer, nonce, System.currentTimeMillis(), list, from, n);
                    trySend(socket, length, e.getKey());
                }
            }
        }
    }

    private DatagramPort ensureQuerySocket() throws IOException {
        synchronized (sendLock) {
            if (closed) {
                throw new IOException("the resolver is closed");
            }
            if (querySocket == null) {
                DatagramPort s = sockets.open(0, false);
                startThread("rdmanio-resolver-answers", () -> receiveLoop(s, false));
                querySocket = s;
                // A process that resolves also listens on the well-known port, so announcements and withdrawals
                // keep its cache current; without it, resolves still work, only slower to notice restarts.
                try {
                    ensureResponderSocket();
                } catch (IOException e) {
                    LOG.warn("the resolver cannot listen on UDP port {}; announcements will not reach this "
                        + "process's cache: {}", settings.port(), e.getMessage());
                }
            }
            return querySocket;
        }
    }

    /** One resolve in flight: the addresses it waits for and the answers so far. Thread-safe (its monitor). */
    private static final class Pending {
        private final Set<InetSocketAddress> wanted;
        private final long startNanos;
        private final boolean signed;
        private final Map<InetSocketAddress, Resolution> results = new HashMap<>();

        Pending(Collection<InetSocketAddress> wanted, long startNanos, boolean signed) {
            this.wanted = new LinkedHashSet<>(wanted);
            this.startNanos = startNanos;
            this.signed = signed;
        }

        synchronized boolean offer(Entry e, SocketAddress from) {
            InetSocketAddress a = e.address();
            if (!wanted.contains(a) || results.containsKey(a)) {
                return false;
            }
            long micros = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - startNanos);
            results.put(a, new Resolution(a, e.endpoints(), e.incarnation(),
                (signed ? "signed answer from " : "answer from ") + from + " after " + micros / 1000 + "."
                    + String.format("%03d", micros % 1000) + " ms",
                signed ? Resolution.Origin.SIGNED : Resolution.Origin.ANSWER));
            if (results.size() == wanted.size()) {
                notifyAll();
            }
            return true;
        }

        synchronized boolean await(long untilNanos) throws InterruptedException {
            while (results.size() < wanted.size()) {
                long left = untilNanos - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return true;
        }

        synchronized List<InetSocketAddress> unanswered() {
            List<InetSocketAddress> open = new ArrayList<>();
            for (InetSocketAddress a : wanted) {
                if (!results.containsKey(a)) {
                    open.add(a);
                }
            }
            return open;
        }

        synchronized Map<InetSocketAddress, Resolution> results() {
            return new HashMap<>(results);
        }
    }

    // -------------------------------------------------------------------------------------------- responder side

    @Override
    public void publish(InetSocketAddress address, Endpoints endpoints, long incarnation) throws IOException {
        ensureResponderSocket();
        synchronized (sendLock) {
            // A listener binds: join the group on interfaces that got IPv6 (or came up) since the socket opened.
            if (responderSocket != null) {
                joinGroups(responderSocket);
            }
        }
        registrations.put(address, new Registration(endpoints, incarnation));
        List<Entry> entries = new ArrayList<>();
        for (InetSocketAddress a : concreteAddresses(address)) {
            entries.add(new Entry(a, endpoints, incarnation));
        }
        broadcastEntries(TYPE_ANNOUNCE, address, entries);
        stats.announcesSent.increment();
    }

    @Override
    public void withdraw(InetSocketAddress address, long incarnation) {
        Registration r = registrations.get(address);
        if (r == null || r.incarnation != incarnation || !registrations.remove(address, r)) {
            return;
        }
        List<Entry> entries = new ArrayList<>();
        for (InetSocketAddress a : concreteAddresses(address)) {
            entries.add(new Entry(a, null, incarnation));
        }
        broadcastEntries(TYPE_WITHDRAW, address, entries);
        stats.withdrawalsSent.increment();
    }

    /** The incarnation registered for {@code address}, or {@code null}. */
    Long registeredIncarnation(InetSocketAddress address) {
        Registration r = registrations.get(address);
        return r == null ? null : r.incarnation;
    }

    private void broadcastEntries(int type, InetSocketAddress listener, List<Entry> entries) {
        DatagramPort socket;
        synchronized (sendLock) {
            socket = responderSocket;
            if (socket == null || closed) {
                return;
            }
            Set<InetSocketAddress> destinations = new LinkedHashSet<>();
            if (listener.getAddress().isAnyLocalAddress()) {
                destinations.addAll(allDestinations());
            } else {
                destinations.addAll(destinations(listener.getAddress()));
            }
            long nonce = nextNonce();
            for (InetSocketAddress d : destinations) {
                for (int from = 0; from < entries.size(); from += MAX_ENDPOINT_RECORDS) {
                    int n = Math.min(MAX_ENDPOINT_RECORDS, entries.size() - from);
                    int length = sendCodec.encodeEntries(sendBuffer, type, nonce, System.currentTimeMillis(),
                        entries, from, n);
                    trySend(socket, length, d);
                }
            }
        }
    }

    private void ensureResponderSocket() throws IOException {
        synchronized (sendLock) {
            if (closed) {
                throw new IOException("the resolver is closed");
            }
            if (responderSocket == null) {
                DatagramPort s = sockets.open(settings.port(), true);
                joinGroups(s);
                startThread("rdmanio-resolver-responder", () -> receiveLoop(s, true));
                responderSocket = s;
            }
        }
    }

    /**
     * Joins the IPv6 group on each multicast interface in use not joined yet, so that IPv6 queries and
     * announcements reach this process even when other processes on the host share the port. An interface that
     * refuses (IPv6 off) is skipped: IPv4 still works, and the doctor reports the interfaces.
     */
    private void joinGroups(DatagramPort s) {
        assert Thread.holdsLock(sendLock);
        for (ResolverInterfaces.Nic n : nicsInUse()) {
            if (n.multicast6() && !joined.contains(n.name())) {
                try {
                    s.join(ResolverInterfaces.GROUP6, n.name());
                    joined.add(n.name());
                } catch (IOException | RuntimeException e) {
                    LOG.debug("the resolver cannot join {} on {}: IPv6 peers there are asked by unicast only",
                        ResolverInterfaces.GROUP6, n.name(), e);
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------ receive threads

    /**
     * Receives until {@code socket} closes. The responder's socket takes queries, announcements and withdrawals;
     * the querier's takes answers. Runs on its own thread; the codec, buffers, rate limiter and replay memory are
     * confined to it.
     */
    private void receiveLoop(DatagramPort socket, boolean responder) {
        ResolverCodec codec = new ResolverCodec(settings.key());
        // One byte more than the largest packet, so an oversized datagram shows as MAX_PACKET + 1 bytes.
        byte[] in = new byte[MAX_PACKET + 1];
        ByteBuffer inBuffer = ByteBuffer.wrap(in);
        DatagramPacket packet = new DatagramPacket(in, in.length);
        ByteBuffer outBuffer = ByteBuffer.allocate(MAX_PACKET);
        RateLimiter limiter = new RateLimiter(settings.rateLimit(), settings.globalRateLimit());
        Map<Long, Boolean> recent = new LinkedHashMap<>(16, 0.75f, false) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
                return size() > RECENT_NONCES;
            }
        };
        while (true) {
            packet.setLength(in.length);
            try {
                socket.receive(packet);
            } catch (IOException e) {
                if (isClosed()) {
                    return;
                }
                LOG.debug("resolver receive failed; continuing", e);
                continue;
            }
            try {
                Packet p = codec.decode(inBuffer, packet.getLength(), System.currentTimeMillis());
                SocketAddress from = packet.getSocketAddress();
                if (responder) {
                    onResponderPacket(p, from, socket, codec, outBuffer, limiter, recent);
                } else if (p.type() == TYPE_ANSWER) {
                    onAnswer(p, from);
                } else {
                    stats.answersUnmatched.increment();
                }
            } catch (BadPacketException e) {
                count(e.counter);
                LOG.debug("resolver dropped a packet from {}: {}", packet.getSocketAddress(), e.getMessage());
            } catch (RuntimeException e) {
                // A bug must not stop the responder: count it as malformed and go on.
                stats.malformed.increment();
                LOG.warn("resolver failed on a packet from {}", packet.getSocketAddress(), e);
            }
        }
    }

    private void onAnswer(Packet p, SocketAddress from) {
        Pending q = pending.get(p.nonce());
        if (q == null) {
            stats.answersUnmatched.increment();
            return;
        }
        for (Entry e : p.entries()) {
            if (q.offer(e, from)) {
                stats.answersAccepted.increment();
            } else {
                stats.answersUnmatched.increment();
            }
        }
    }

    private void onResponderPacket(Packet p, SocketAddress from, DatagramPort socket, ResolverCodec codec,
                                   ByteBuffer out, RateLimiter limiter, Map<Long, Boolean> recent) {
        switch (p.type()) {
            case TYPE_QUERY:
                stats.queriesReceived.increment();
                answer(p, from, socket, codec, out, limiter);
                break;
            case TYPE_ANNOUNCE:
            case TYPE_WITHDRAW:
                if (recent.put(p.nonce(), Boolean.TRUE) != null) {
                    stats.replayed.increment();
                    return;
                }
                long now = System.nanoTime();
                boolean signed = settings.signed();
                Boolean fromHere = null;
                for (Entry e : p.entries()) {
                    if (e.address().getAddress().isLoopbackAddress()) {
                        // Another host's loopback is not ours: only this host speaks for 127.0.0.0/8 and ::1.
                        if (fromHere == null) {
                            fromHere = isLocal(((InetSocketAddress) from).getAddress());
                        }
                        if (!fromHere) {
                            continue;
                        }
                    }
                    if (p.type() == TYPE_ANNOUNCE) {
                        stats.announcesReceived.increment();
                        cache.putFound(new Resolution(e.address(), e.endpoints(), e.incarnation(),
                            (signed ? "signed announcement from " : "announcement from ") + from,
                            signed ? Resolution.Origin.SIGNED : Resolution.Origin.ANNOUNCEMENT), now);
                    } else {
                        stats.withdrawalsReceived.increment();
                        cache.withdraw(e.address(), e.incarnation(), signed, "withdrawn by " + from, now);
                    }
                }
                break;
            default:
                // An answer on the well-known port answers nothing this process asked.
                stats.answersUnmatched.increment();
        }
    }

    private void answer(Packet query, SocketAddress to, DatagramPort socket, ResolverCodec codec, ByteBuffer out,
                        RateLimiter limiter) {
        InetSocketAddress dest = (InetSocketAddress) to;
        List<Entry> found = new ArrayList<>();
        Boolean fromHere = null;
        for (InetSocketAddress a : query.queried()) {
            Registration r = lookupRegistration(a);
            if (r == null) {
                continue;
            }
            if (a.getAddress().isLoopbackAddress()) {
                // Only a process on this host means this host by 127.0.0.1 or ::1: another host asking about its
                // loopback by unicast (or a forger) must not learn this host's endpoints for it.
                if (fromHere == null) {
                    fromHere = isLocal(dest.getAddress());
                }
                if (!fromHere) {
                    continue;
                }
            }
            found.add(new Entry(a, r.endpoints, r.incarnation));
        }
        if (found.isEmpty()) {
            return;
        }
        for (int from = 0; from < found.size(); from += MAX_ENDPOINT_RECORDS) {
            int verdict = limiter.tryTake(dest.getAddress(), System.nanoTime());
            if (verdict != RateLimiter.GRANTED) {
                (verdict == RateLimiter.SOURCE_LIMITED ? stats.rateLimited : stats.rateLimitedGlobal).increment();
                return;
            }
            int n = Math.min(MAX_ENDPOINT_RECORDS, found.size() - from);
            int length = codec.encodeEntries(out, TYPE_ANSWER, query.nonce(), System.currentTimeMillis(), found,
                from, n);
            trySend(socket, out, length, dest);
            stats.answersSent.increment();
        }
    }

    /** The registration serving {@code a}: its own, or a wildcard listener's on the port when {@code a} is ours. */
    private Registration lookupRegistration(InetSocketAddress a) {
        Registration r = registrations.get(a);
        if (r != null) {
            return r;
        }
        Registration any4 = registrations.get(new InetSocketAddress("0.0.0.0", a.getPort()));
        Registration any6 = registrations.get(new InetSocketAddress("::", a.getPort()));
        if ((any4 == null && any6 == null) || !isLocal(a.getAddress())) {
            return null;
        }
        return any4 != null ? any4 : any6;
    }

    /**
     * Answers allowed: a token bucket per source address ({@code rateLimit} a second, bursts as large) and one for
     * all sources together ({@code globalRateLimit}), which a sender cycling its source address cannot escape. The
     * per-source table holds at most {@link #RATE_SOURCES} addresses, forgetting the least recently seen; a
     * forgotten source comes back with a full bucket, which the global bucket still bounds. Not thread-safe:
     * confined to the responder's thread.
     */
    static final class RateLimiter {
        static final int GRANTED = 0;
        static final int SOURCE_LIMITED = 1;
        static final int GLOBAL_LIMITED = 2;

        private final double perSource;
        private final TokenBucket global;
        private final Map<InetAddress, TokenBucket> sources = new LinkedHashMap<>(64, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<InetAddress, TokenBucket> eldest) {
                return size() > RATE_SOURCES;
            }
        };

        RateLimiter(int perSource, int global) {
            this.perSource = perSource;
            this.global = new TokenBucket(global, System.nanoTime());
        }

        /** {@link #GRANTED} (a token of each bucket taken), or which bucket is empty (nothing taken). */
        int tryTake(InetAddress source, long now) {
            TokenBucket b = sources.get(source);
            if (b == null) {
                b = new TokenBucket(perSource, now);
                sources.put(source, b);
            }
            if (!b.refill(perSource, now)) {
                return SOURCE_LIMITED;
            }
            if (!global.refill(global.capacity, now)) {
                return GLOBAL_LIMITED;
            }
            b.tokens -= 1;
            global.tokens -= 1;
            return GRANTED;
        }

        /** Sources remembered now (at most {@link #RATE_SOURCES}). */
        int sourcesTracked() {
            return sources.size();
        }
    }

    /** {@code capacity} tokens at most, refilled at {@code capacity} a second. Not thread-safe. */
    private static final class TokenBucket {
        final double capacity;
        double tokens;
        long at;

        TokenBucket(double capacity, long now) {
            this.capacity = capacity;
            this.tokens = capacity;
            this.at = now;
        }

        /** Refills for the time since the last call; whether a whole token is there. */
        boolean refill(double rate, long now) {
            tokens = Math.min(capacity, tokens + Math.max(0, now - at) * rate / 1e9);
            at = now;
            return tokens >= 1;
        }
    }

    // ------------------------------------------------------------------------------------------------ addressing

    /**
     * Where queries about (and announcements of) {@code address} go: on each interface configured, or on the route's
     * interface, the IPv4 subnet broadcast (computed from the prefix when the interface has none) or the IPv6 group;
     * 127.255.255.255 for this host's own addresses not otherwise covered (every responder on the host hears it);
     * unicast to the address itself when it is outside those subnets.
     */
    List<InetSocketAddress> destinations(InetAddress address) {
        int port = settings.port();
        List<InetSocketAddress> out = new ArrayList<>(2);
        InetSocketAddress loopback = new InetSocketAddress(ResolverInterfaces.LOOPBACK_BROADCAST, port);
        if (address.isLoopbackAddress()) {
            // IPv6 too: ::1 has no multicast, and unicast to a shared port reaches one socket; the responders are
            // dual-stack, so every one of them hears the IPv4 loopback broadcast, whatever address the query names.
            out.add(loopback);
            return out;
        }
        List<ResolverInterfaces.Nic> candidates = new ArrayList<>();
        // By route: only the address the route leaves from (not the interface's other subnets) for IPv4.
        InetAddress routeSource = null;
        if (!settings.interfaces().isEmpty()) {
            for (String name : settings.interfaces()) {
                ResolverInterfaces.Nic n = ResolverInterfaces.byName(name);
                if (n != null) {
                    candidates.add(n);
                } else {
                    LOG.warn("rdmanio.resolver.interfaces names {}, which does not exist", name);
                }
            }
        } else {
            routeSource = routeSource(address);
            ResolverInterfaces.Nic route = routeSource == null ? null : ResolverInterfaces.holding(routeSource);
            if (route != null) {
                candidates.add(route);
            }
        }
        boolean v6 = address instanceof Inet6Address;
        boolean covered = false;
        for (ResolverInterfaces.Nic n : candidates) {
            if (!n.up()) {
                continue;
            }
            for (ResolverInterfaces.Address ia : n.addresses()) {
                if ((ia.address() instanceof Inet6Address) != v6
                        || !v6 && routeSource != null && !routeSource.equals(ia.address())) {
                    continue;
                }
                InetSocketAddress d = null;
                if (!v6) {
                    InetAddress b = ResolverInterfaces.broadcast(n, ia);
                    d = b == null ? null : new InetSocketAddress(b, port);
                } else if (n.multicast6()) {
                    d = new InetSocketAddress(n.group6(), port);
                }
                if (d != null) {
                    if (!out.contains(d)) {
                        out.add(d);
                    }
                    covered |= ResolverInterfaces.sameSubnet(ia, address);
                }
            }
        }
        if (!covered) {
            boolean local = isLocal(address);
            out.add(local ? loopback : new InetSocketAddress(address, port));
            if (!local) {
                warnUnicastOnly(address, candidates, v6);
            }
        }
        return out;
    }

    /**
     * Says once per interface (and family) that peers there are asked by unicast, which reaches one rdmanio
     * process on their host, so that {@code auto} does not quietly miss the others.
     */
    private void warnUnicastOnly(InetAddress address, List<ResolverInterfaces.Nic> candidates, boolean v6) {
        String why;
        String key;
        boolean offSubnet = false;
        if (candidates.isEmpty()) {
            key = "no interface";
            why = "no interface routes to it";
        } else {
            ResolverInterfaces.Nic n = candidates.get(0);
            key = n.name() + (v6 ? "/6" : "/4");
            why = !n.up() ? n.name() + " is down" : n.pointToPoint() ? n.name() + " is a point-to-point link"
                : v6 && !n.multicast6() ? n.name() + " has no IPv6 multicast"
                : "it is outside the subnets of " + n.name() + (v6 ? "" : " that have a broadcast address");
            offSubnet = n.up() && !n.pointToPoint() && (!v6 || n.multicast6());
        }
        if (unicastWarned.add(key)) {
            String message = "rdmanio: the resolver asks about {} by unicast ({}), which reaches only one rdmanio "
                + "process on its host; `./rdmanio doctor` lists what the resolver can do on each interface";
            if (offSubnet) {
                LOG.info(message, address.getHostAddress(), why);
            } else {
                LOG.warn(message, address.getHostAddress(), why);
            }
        }
    }

    /** The local address the kernel's route to {@code address} leaves from, or {@code null}. */
    private static InetAddress routeSource(InetAddress address) {
        try (DatagramSocket probe = new DatagramSocket()) {
            // Connecting a UDP socket sends nothing; it only makes the kernel pick the route and source address.
            probe.connect(address, 9);
            InetAddress local = probe.getLocalAddress();
            return local == null || local.isAnyLocalAddress() ? null : local;
        } catch (IOException | RuntimeException e) {
            LOG.debug("no route to {}", address, e);
        }
        return null;
    }

    /**
     * Where a wildcard listener's announcements go: 127.255.255.255 (this host), and on every interface in use its
     * IPv4 broadcasts and the IPv6 group.
     */
    private List<InetSocketAddress> allDestinations() {
        Set<InetSocketAddress> out = new LinkedHashSet<>();
        out.add(new InetSocketAddress(ResolverInterfaces.LOOPBACK_BROADCAST, settings.port()));
        for (ResolverInterfaces.Nic n : nicsInUse()) {
            if (n.loopback()) {
                continue;
            }
            for (ResolverInterfaces.Address ia : n.addresses()) {
                InetAddress b = ResolverInterfaces.broadcast(n, ia);
                if (b != null) {
                    out.add(new InetSocketAddress(b, settings.port()));
                }
            }
            if (n.multicast6()) {
                out.add(new InetSocketAddress(n.group6(), settings.port()));
            }
        }
        return new ArrayList<>(out);
    }

    /** The interfaces in use: those configured, else all that are up. */
    private List<ResolverInterfaces.Nic> nicsInUse() {
        List<ResolverInterfaces.Nic> out = new ArrayList<>();
        if (!settings.interfaces().isEmpty()) {
            for (String name : settings.interfaces()) {
                ResolverInterfaces.Nic n = ResolverInterfaces.byName(name);
                if (n != null) {
                    out.add(n);
                }
            }
        } else {
            for (ResolverInterfaces.Nic n : ResolverInterfaces.system()) {
                if (n.up()) {
                    out.add(n);
                }
            }
        }
        return out;
    }

    /** A wildcard listener is announced under each address of this host; a specific one under its own. */
    private List<InetSocketAddress> concreteAddresses(InetSocketAddress listener) {
        if (!listener.getAddress().isAnyLocalAddress()) {
            return List.of(listener);
        }
        List<InetSocketAddress> out = new ArrayList<>();
        boolean v4 = listener.getAddress() instanceof Inet4Address;
        for (ResolverInterfaces.Nic n : nicsInUse()) {
            for (ResolverInterfaces.Address ia : n.addresses()) {
                InetAddress a = ia.address();
                if (!v4 || a instanceof Inet4Address) {
                    out.add(new InetSocketAddress(a, listener.getPort()));
                }
            }
        }
        return out;
    }

    static boolean isLocal(InetAddress a) {
        if (a.isLoopbackAddress() || a.isAnyLocalAddress()) {
            return true;
        }
        try {
            return NetworkInterface.getByInetAddress(a) != null;
        } catch (SocketException e) {
            return false;
        }
    }

    // ---------------------------------------------------------------------------------------------------- misc

    private void trySend(DatagramPort socket, int length, InetSocketAddress to) {
        assert Thread.holdsLock(sendLock);
        trySend(socket, sendBuffer, length, to);
    }

    private void trySend(DatagramPort socket, ByteBuffer b, int length, InetSocketAddress to) {
        try {
            socket.send(new DatagramPacket(b.array(), 0, length, to));
        } catch (IOException e) {
            // Loss is not an error for a resolver: a lost query is retried, a lost answer looks like a miss.
            stats.sendErrors.increment();
            LOG.debug("resolver send to {} failed", to, e);
        }
    }

    private long nextNonce() {
        long n;
        do {
            n = random.nextLong();
        } while (n == 0);
        return n;
    }

    private void count(String counter) {
        switch (counter) {
            case "oversized":
                stats.oversized.increment();
                break;
            case "unsigned":
                stats.unsigned.increment();
                break;
            case "forged":
                stats.forged.increment();
                break;
            case "stale":
                stats.stale.increment();
                break;
            default:
                stats.malformed.increment();
        }
    }

    private static void startThread(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        // Resolves and answers are on the connect path of other processes; as the ancestor did, give them priority.
        t.setPriority(Thread.MAX_PRIORITY);
        t.start();
    }

    private boolean isClosed() {
        synchronized (sendLock) {
            return closed;
        }
    }

    @Override
    public void close() {
        List<InetSocketAddress> open = new ArrayList<>(registrations.keySet());
        for (InetSocketAddress a : open) {
            Long inc = registeredIncarnation(a);
            if (inc != null) {
                withdraw(a, inc);
            }
        }
        synchronized (sendLock) {
            closed = true;
            if (querySocket != null) {
                closeQuietly(querySocket);
            }
            if (responderSocket != null) {
                closeQuietly(responderSocket);
            }
        }
    }

    private static void closeQuietly(DatagramPort p) {
        try {
            p.close();
        } catch (IOException e) {
            LOG.debug("closing a resolver socket failed", e);
        }
    }
}
