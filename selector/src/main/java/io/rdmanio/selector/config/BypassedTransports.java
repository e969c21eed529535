package io.rdmanio.selector.config;

import io.rdmanio.core.Logs;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;

/**
 * Native transports that carry a program's sockets past every {@code SelectorProvider}: Netty's epoll, io_uring and
 * kqueue transports (picked automatically by gRPC's shaded Netty and by Spark's {@code AUTO} io mode), whose
 * connections rdmanio can never route. The agent watches for their event loops being loaded
 * ({@code NativeTransportWatch}); each kind is said once (the SLF4J logger {@code io.rdmanio.routing} at warn, and
 * {@code -Drdmanio.debug=routing}) and listed in the stats file and JMX as {@code bypassed}. The switch that keeps
 * such a program on NIO is in docs/compatibility.md.
 *
 * <p>Thread-safe.
 */
public final class BypassedTransports {

    private static final Logger LOG = Logs.get("io.rdmanio.routing");
    private static final Map<String, String> SEEN = new ConcurrentHashMap<>();

    private BypassedTransports() {
    }

    /**
     * The kind of native transport whose event loop {@code internalClassName} is (any shading prefix), or
     * {@code null} for any other class.
     */
    public static String kindOf(String internalClassName) {
        if (internalClassName == null || !internalClassName.contains("netty/")) {
            return null;
        }
        if (internalClassName.endsWith("/netty/channel/epoll/EpollEventLoop")
                || internalClassName.endsWith("/netty/channel/epoll/EpollIoHandler")) {
            return "netty-epoll";
        }
        if (internalClassName.endsWith("/netty/channel/uring/IoUringIoHandler")
                || internalClassName.endsWith("/netty/incubator/channel/uring/IOUringEventLoop")) {
            return "netty-io_uring";
        }
        if (internalClassName.endsWith("/netty/channel/kqueue/KQueueEventLoop")
                || internalClassName.endsWith("/netty/channel/kqueue/KQueueIoHandler")) {
            return "netty-kqueue";
        }
        return null;
    }

    /** Records that {@code className} (internal form) of transport {@code kind} was loaded; says it once. */
    public static void seen(String kind, String className) {
        if (SEEN.putIfAbsent(kind, className.replace('/', '.')) != null) {
            return;
        }
        String line = "a native transport (" + kind + ", " + className.replace('/', '.') + ") was loaded: the"
                + " sockets it opens bypass every SelectorProvider and stay on the kernel's TCP; see"
                + " docs/compatibility.md for the switch that keeps the program on NIO";
        LOG.warn(line);
        if (Debug.routing()) {
            Debug.print("routing", line);
        }
    }

    /** The kinds seen, each with the class that showed it. */
    public static Map<String, String> seen() {
        return new TreeMap<>(SEEN);
    }
}
