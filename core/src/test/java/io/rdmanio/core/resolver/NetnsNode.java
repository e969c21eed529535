package io.rdmanio.core.resolver;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * One rdmanio process in a test network namespace, driven line by line on stdin; answers on stdout. Settings come
 * from the {@code rdmanio.resolver.*} system properties; {@code test.loss} (a fraction) makes its sockets lossy and
 * {@code test.forgeKey} (or {@code test.forgeKey=none}) makes it a forger that answers every query it hears.
 *
 * <pre>
 *   register HOST:PORT disni|shm INCARNATION   -> REGISTERED
 *   unregister HOST:PORT                        -> UNREGISTERED
 *   resolve HOST:PORT                           -> RESOLVED HOST:PORT found|none INCARNATION MICROS SOURCE...
 *   peek HOST:PORT                              -> PEEK HOST:PORT found|none|unknown INCARNATION
 *   invalidate HOST:PORT                        -> INVALIDATED
 *   reask HOST:PORT                             -> REASKED HOST:PORT found|none INCARNATION SOURCE...
 *   forge HOST:PORT INCARNATION TO              -> FORGED  (an unsigned ANNOUNCE of a bogus disni endpoint for
 *                                                 HOST:PORT, from a plain UDP socket to TO, the resolver port)
 *   junk HOST PORT COUNT SEED                   -> JUNK SENT  (random, truncated and oversized datagrams)
 *   stats                                       -> STATS name=value ...
 *   interfaces                                  -> INTERFACES line | line ...  (the doctor's per-interface report)
 *   quit
 * </pre>
 */
public final class NetnsNode {

    private NetnsNode() {
    }

    public static void main(String[] args) throws Exception {
        ResolverSettings settings = ResolverSettings.load(System::getProperty);
        String forgeKey = System.getProperty("test.forgeKey");
        if (forgeKey != null) {
            try (ResolverLoopbackTest.Forger f = new ResolverLoopbackTest.Forger(settings.port(),
                    forgeKey.equals("none") ? null : forgeKey.getBytes(StandardCharsets.UTF_8))) {
                System.out.println("READY forger");
                System.out.flush();
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            }
            return;
        }
        String loss = System.getProperty("test.loss");
        DatagramPort.Factory sockets = loss == null ? DatagramPort.SYSTEM
            : new LossyPorts(Double.parseDouble(loss), ProcessHandle.current().pid());
        try (Resolver resolver = new Resolver(settings, sockets)) {
            System.out.println("READY " + settings);
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                String[] f = line.trim().split("\\s+");
                String out;
                switch (f[0]) {
                    case "register": {
                        InetSocketAddress a = parse(f[1]);
                        Endpoints e = f[2].equals("shm") ? Endpoints.shm(HostIdentity.local(), a) : Endpoints.disni(a);
                        resolver.register(a, e, Long.parseLong(f[3]));
                        out = "REGISTERED";
                        break;
                    }
                    case "unregister":
                        resolver.unregister(parse(f[1]));
                        out = "UNREGISTERED";
                        break;
                    case "resolve": {
                        InetSocketAddress a = parse(f[1]);
                        long start = System.nanoTime();
                        Resolution r = resolver.resolve(a);
                        long micros = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start);
                        out = "RESOLVED " + f[1] + " " + (r.found() ? "found" : "none") + " " + r.incarnation() + " "
                            + micros + " " + r.source() + (r.found() ? " -> " + r.endpoints() : "");
                        break;
                    }
                    case "peek": {
                        Resolution r = resolver.cached(parse(f[1]));
                        out = "PEEK " + f[1] + " " + (r == null ? "unknown 0" : (r.found() ? "found " : "none ")
                            + r.incarnation());
                        break;
                    }
                    case "reask": {
                        InetSocketAddress a = parse(f[1]);
                        Resolution r = resolver.reask(a, resolver.cached(a));
                        out = "REASKED " + f[1] + " " + (r == null ? "unknown 0" : (r.found() ? "found " : "none ")
                            + r.incarnation() + " " + r.source() + (r.found() ? " -> " + r.endpoints() : ""));
                        break;
                    }
                    case "forge":
                        forge(parse(f[1]), Long.parseUnsignedLong(f[2]), InetAddress.getByName(f[3]), settings.port());
                        out = "FORGED";
                        break;
                    case "invalidate":
                        resolver.invalidate(parse(f[1]));
                        out = "INVALIDATED";
                        break;
                    case "junk":
                        junk(InetAddress.getByName(f[1]), Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                            Long.parseLong(f[4]));
                        out = "JUNK SENT";
                        break;
                    case "stats":
                        out = "STATS " + resolver.stats();
                        break;
                    case "interfaces":
                        out = "INTERFACES " + String.join(" | ", ResolverInterfaces.report(settings,
                            ResolverInterfaces.system()));
                        break;
                    case "quit":
                        return;
                    default:
                        out = "ERROR unknown command " + f[0];
                }
                System.out.println(out);
                System.out.flush();
            }
        }
    }

    private static void forge(InetSocketAddress address, long incarnation, InetAddress to, int port)
            throws Exception {
        ByteBuffer b = ByteBuffer.allocate(ResolverPacketDescriptor.MAX_PACKET);
        int n = new ResolverCodec(null).encodeEntries(b, ResolverPacketDescriptor.TYPE_ANNOUNCE,
            new Random().nextLong() | 1, System.currentTimeMillis(),
            List.of(new ResolverCodec.Entry(address, ResolverLoopbackTest.Forger.EVIL, incarnation)), 0, 1);
        try (DatagramSocket s = new DatagramSocket()) {
            s.setBroadcast(true);
            s.send(new DatagramPacket(b.array(), n, to, port));
        }
    }

    private static void junk(InetAddress to, int port, int count, long seed) throws Exception {
        Random random = new Random(seed);
        try (DatagramSocket s = new DatagramSocket()) {
            s.setBroadcast(true);
            for (int i = 0; i < count; i++) {
                byte[] b = new byte[1 + random.nextInt(300)];
                random.nextBytes(b);
                s.send(new DatagramPacket(b, b.length, to, port));
            }
            ByteBuffer q = ByteBuffer.allocate(ResolverPacketDescriptor.MAX_PACKET);
            int n = new ResolverCodec(null).encodeQuery(q, 1, System.currentTimeMillis(),
                List.of(new InetSocketAddress(to, 1)), 0, 1);
            s.send(new DatagramPacket(q.array(), n - 5, to, port));
            byte[] big = new byte[8000];
            System.arraycopy(q.array(), 0, big, 0, n);
            s.send(new DatagramPacket(big, big.length, to, port));
        }
    }

    private static InetSocketAddress parse(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        return new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    }
}
