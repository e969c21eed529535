package io.rdmanio.core.fabric.shm;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Whether the kernel's TCP has a listening socket on a port, read from {@code /proc/net/tcp} and
 * {@code /proc/net/tcp6}: a refused shm connect uses it to say that the server it looked for listens on TCP
 * instead (most often a server bound to the wildcard address, which a rule naming one address does not route).
 * Only on the refusal path; never fails (an unreadable table answers "not known").
 *
 * <p>The kernel renders the whole table for each read: 15 ms on a host with a few thousand sockets, so a refused
 * connect was 500 times slower than TCP's. The tables are read only when a cheap look says a socket holds the
 * port: a kernel socket bound to the wildcard address and the port with {@code SO_REUSEADDR} (bound, never
 * listening), which Linux refuses only while another socket listens on that port, at any address, or holds it
 * without that option. A free port (the common refusal: nothing serves there) answers at once.
 *
 * <pre>
 *   sl  local_address                         rem_address  st ...
 *    0: 0100007F:1F90                         00000000:0000 0A        (IPv4: address in host order, hex port)
 *    1: 00000000000000000000000000000000:1F90 ...           0A        (IPv6)
 *                                                           0A = LISTEN
 * </pre>
 */
final class KernelListeners {

    private static final String LISTEN = "0A";

    private KernelListeners() {
    }

    /**
     * A sentence naming the kernel's TCP listener on {@code target}'s port, or {@code null} when there is none
     * (or the tables cannot be read).
     */
    static String tcpListenerHint(InetSocketAddress target) {
        if (target.getPort() == 0 || portIsFree(target.getPort())) {
            return null;
        }
        return hint(target.getPort(), read(Path.of("/proc/net/tcp")), read(Path.of("/proc/net/tcp6")));
    }

    /** True when no kernel socket listens on {@code port} (nor holds it exclusively); false when one may. */
    private static boolean portIsFree(int port) {
        try (SocketChannel probe = ShmWatcher.jdkProvider().openSocketChannel()) {
            probe.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            probe.bind(new InetSocketAddress(port));
            return true;
        } catch (IOException | RuntimeException e) {
            // In use (a listener, or a socket bound without SO_REUSEADDR), or not known: the tables tell.
            return false;
        }
    }

    static String hint(int port, List<String> tcp, List<String> tcp6) {
        String where = null;
        for (List<String> table : List.of(tcp, tcp6)) {
            for (String line : table) {
                String[] f = line.trim().split("\\s+");
                if (f.length < 4 || !LISTEN.equals(f[3])) {
                    continue;
                }
                int colon = f[1].lastIndexOf(':');
                if (colon < 0) {
                    continue;
                }
                int p;
                try {
                    p = Integer.parseInt(f[1].substring(colon + 1), 16);
                } catch (NumberFormatException e) {
                    continue;
                }
                if (p != port) {
                    continue;
                }
                boolean wildcard = f[1].substring(0, colon).chars().allMatch(c -> c == '0');
                if (wildcard || where == null) {
                    where = wildcard ? "the wildcard address" : "an interface's address";
                }
            }
        }
        if (where == null) {
            return null;
        }
        return "the kernel's TCP has a listener on port " + port + " at " + where + ": that server's bind was not"
            + " routed to a fabric (a rule naming one address does not match a wildcard bind; `bind * " + port
            + "` does), or route this connect with `both`";
    }

    private static List<String> read(Path table) {
        try {
            return Files.readAllLines(table, StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }
}
