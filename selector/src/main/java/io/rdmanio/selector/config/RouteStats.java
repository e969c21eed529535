package io.rdmanio.selector.config;

import io.rdmanio.core.Logs;
import io.rdmanio.core.events.Recorder;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;

/**
 * Process-wide record of routing: how many sockets each rule routed (a client at its connect, a server at its
 * bind; {@code (no rule)} for those no rule matched, which stay on TCP), and the fallbacks from a fabric to TCP
 * with their reasons. Each decision is logged at debug level, each fallback at info.
 *
 * <p>Thread-safe. A decision costs one map lookup and one striped add; the distinct reasons kept are bounded by
 * {@link #MAX_REASONS} (beyond it they count under {@link #OTHER_REASONS}), so a failing peer cannot grow memory.
 */
public final class RouteStats {

    /** The key of sockets that no rule matched. */
    public static final String NO_RULE = "(no rule)";
    static final int MAX_REASONS = 64;
    static final String OTHER_REASONS = "(other reasons)";

    private static final Logger LOG = Logs.get("io.rdmanio.routing");
    private static final RouteStats INSTANCE = new RouteStats();

    private final Map<String, LongAdder> byRule = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> fallbackReasons = new ConcurrentHashMap<>();
    private final LongAdder fallbacks = new LongAdder();

    public static RouteStats get() {
        return INSTANCE;
    }

    /** Records and logs the decision for an unbound socket's connect; returns {@code route}. */
    public static Route connect(InetSocketAddress remote, Route route) {
        INSTANCE.count(route);
        if (LOG.isDebugEnabled()) {
            LOG.debug("connect to {}: {} by {}", remote, describe(route), route.rule() == null ? NO_RULE : route.rule());
        }
        if (Debug.routing()) {
            Debug.print("routing", "connect to " + remote + ": " + describe(route) + " by "
                    + (route.rule() == null ? NO_RULE : route.rule()));
        }
        return route;
    }

    /** Records and logs the decision for a server socket's bind; returns {@code route}. */
    public static Route bind(InetSocketAddress local, Route route) {
        INSTANCE.count(route);
        if (LOG.isDebugEnabled()) {
            LOG.debug("bind {}: {} by {}", local, describe(route), route.rule() == null ? NO_RULE : route.rule());
        }
        if (Debug.routing()) {
            Debug.print("routing", "bind " + local + ": " + describe(route) + " by "
                    + (route.rule() == null ? NO_RULE : route.rule()));
        }
        return route;
    }

    private static String describe(Route route) {
        switch (route.action()) {
            case TCP:
                return "TCP";
            case RDMA:
                return "fabric";
            default:
                return "fabric and TCP (" + route.action().name().toLowerCase(java.util.Locale.ROOT) + ")";
        }
    }

    private void count(Route route) {
        String rule = route.rule() == null ? NO_RULE : route.rule();
        byRule.computeIfAbsent(rule, r -> new LongAdder()).increment();
    }

    /** A client meant for the fabric connects over TCP instead, because of {@code cause}. */
    public void fallback(InetSocketAddress remote, Throwable cause) {
        fallbacks.increment();
        String reason = cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
        LongAdder n = fallbackReasons.get(reason);
        if (n == null) {
            n = fallbackReasons.size() < MAX_REASONS
                    ? fallbackReasons.computeIfAbsent(reason, r -> new LongAdder())
                    : fallbackReasons.computeIfAbsent(OTHER_REASONS, r -> new LongAdder());
        }
        n.increment();
        Recorder.fallback(remote, reason);
        LOG.info("connect to {} falls back to TCP: {}", remote, reason);
        if (Debug.routing()) {
            Debug.print("routing", "connect to " + remote + " falls back to TCP: " + reason);
        }
    }

    /** Sockets routed per rule text ({@code FILE:LINE: RULE}), sorted. */
    public Map<String, Long> byRule() {
        return snapshot(byRule);
    }

    public long fallbacks() {
        return fallbacks.sum();
    }

    /** Fallbacks per reason, sorted. */
    public Map<String, Long> fallbackReasons() {
        return snapshot(fallbackReasons);
    }

    private static Map<String, Long> snapshot(Map<String, LongAdder> m) {
        Map<String, Long> s = new TreeMap<>();
        m.forEach((k, v) -> s.put(k, v.sum()));
        return s;
    }
}
