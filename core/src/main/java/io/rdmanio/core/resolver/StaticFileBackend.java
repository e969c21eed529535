package io.rdmanio.core.resolver;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A resolver backend read from a file, for networks without broadcast. One entry a line, {@code #} starts a comment:
 *
 * <pre>
 *   HOST:PORT  tcp
 *   HOST:PORT  FABRIC[=RDMA_HOST:RDMA_PORT][,FABRIC...]
 * </pre>
 *
 * where {@code PORT} may be {@code *} (every port of the host) and {@code FABRIC} is {@code disni} (its address
 * defaults to the logical one), {@code shm} (the listener is on this host) or {@code loopback} (in this JVM).
 * {@code tcp} says no fabric serves the address, so it is not broadcast for. An exact port wins over {@code *}.
 * IPv6 hosts are written in brackets: {@code [fd00::5]:9000}.
 *
 * <p>Read once, at construction; immutable and thread-safe.
 */
public final class StaticFileBackend implements ResolverBackend {

    private final Path file;
    private final Map<InetSocketAddress, Resolution> exact = new HashMap<>();
    private final Map<InetAddress, Resolution> anyPort = new HashMap<>();

    /**
     * @throws IOException naming the file, the line and what is wrong with it
     */
    public StaticFileBackend(Path file) throws IOException {
        this.file = file;
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IOException("resolver file " + file + ": cannot read it: " + e.getMessage(), e);
        }
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int hash = line.indexOf('#');
            if (hash >= 0) {
                line = line.substring(0, hash);
            }
            line = line.trim();
            if (line.isEmpty()) {
                continue;
            }
            String where = file + ":" + (i + 1);
            String[] f = line.split("\\s+");
            if (f.length != 2) {
                throw new IOException(where + ": expected 'HOST:PORT FABRICS', got '" + line + "'");
            }
            boolean wildcardPort = f[0].endsWith(":*");
            InetSocketAddress address = parse(where, wildcardPort ? f[0].substring(0, f[0].length() - 2) + ":0" : f[0]);
            Resolution r = f[1].equals("tcp") ? Resolution.none(address, "static file " + where + ": tcp")
                : new Resolution(address, endpoints(where, f[1], address), 0, "static file " + where);
            if (wildcardPort) {
                anyPort.put(address.getAddress(), r);
            } else {
                exact.put(address, r);
            }
        }
    }

    private static Endpoints endpoints(String where, String spec, InetSocketAddress address) throws IOException {
        InetSocketAddress disni = null;
        InetSocketAddress shm = null;
        boolean loopback = false;
        for (String part : spec.split(",")) {
            String name = part;
            String at = null;
            int eq = part.indexOf('=');
            if (eq >= 0) {
                name = part.substring(0, eq);
                at = part.substring(eq + 1);
            }
            switch (name) {
                case "disni":
                    disni = at == null ? address : parse(where, at);
                    break;
                case "shm":
                    shm = at == null ? address : parse(where, at);
                    break;
                case "loopback":
                    loopback = true;
                    break;
                default:
                    throw new IOException(where + ": unknown fabric '" + name + "': expected tcp, disni, shm or "
                        + "loopback");
            }
        }
        return new Endpoints(null, shm, disni, loopback ? Endpoints.THIS_PROCESS : null);
    }

    private static InetSocketAddress parse(String where, String hostPort) throws IOException {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0) {
            throw new IOException(where + ": '" + hostPort + "' is not HOST:PORT");
        }
        String host = hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IOException(where + ": '" + hostPort.substring(colon + 1) + "' is not a port");
        }
        if (port < 0 || port > 65535) {
            throw new IOException(where + ": port " + port + " is out of range");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (IOException e) {
            throw new IOException(where + ": cannot resolve host '" + host + "': " + e.getMessage(), e);
        }
    }

    private static InetSocketAddress withPort(InetSocketAddress a, int port) {
        return a == null || a.getPort() != 0 ? a : new InetSocketAddress(a.getAddress(), port);
    }

    @Override
    public String name() {
        return "static file " + file;
    }

    @Override
    public Map<InetSocketAddress, Resolution> resolve(Collection<InetSocketAddress> addresses, long budgetNanos) {
        Map<InetSocketAddress, Resolution> out = new HashMap<>();
        for (InetSocketAddress a : addresses) {
            Resolution r = exact.get(a);
            if (r == null) {
                r = anyPort.get(a.getAddress());
            }
            if (r != null) {
                Endpoints e = r.endpoints();
                if (e != null) {
                    // A HOST:* line's endpoints take the port asked about.
                    e = new Endpoints(e.shmHost(), withPort(e.shmRendezvous(), a.getPort()),
                        withPort(e.disni(), a.getPort()), e.loopbackProcess());
                }
                out.put(a, new Resolution(a, e, r.incarnation(), r.source()));
            }
        }
        return out;
    }
}
