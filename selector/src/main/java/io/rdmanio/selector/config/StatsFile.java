package io.rdmanio.selector.config;

import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.resolver.Resolver;
import io.rdmanio.core.engine.EngineStats;
import io.rdmanio.core.engine.SpinWait;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.TreeMap;

/**
 * The run summary of {@code rdmanio.stats}: JSON written once, at JVM exit.
 *
 * <pre>
 * {
 *   "fabric": "loopback",
 *   "rules": "/etc/rdmanio.rules",
 *   "connections": {"rdma": 2, "tcp": 1},
 *   "bytes": {"rdma": 65536, "tcp": 512},
 *   "engines": {
 *     "loopback": {"connectionsOpened": 2, ..., "receiverNotReady": 0, "protocolErrors": 0}
 *   },
 *   "resolver": {"resolves": 3, "cacheHits": 1, ..., "malformed": 0, "forged": 0},
 *   "routedApis": {"nio": "routed", "javaNet": "routed", "asyncChannels": "routed"},
 *   "routedByRule": {"/etc/rdmanio.rules:1: connect 10.0.0.0/8 *": 2, "(no rule)": 1},
 *   "fallbacks": {"count": 0, "reasons": {}},
 *   "creditStalls": 0,
 *   "receiverNotReady": 0,
 *   "bypassed": {"netty-epoll": "io.netty.channel.epoll.EpollIoHandler"}
 * }
 * </pre>
 *
 * <p>{@code rdma} counts every connection carried by a fabric (disni, shm or loopback); {@code engines} has the
 * counters of each fabric's engine that this process used; {@code resolver}, present when the resolver ran, its
 * counters (named as in {@code ResolverStats}). The file is written beside its final name and moved
 * into place, so a reader never sees half of it.
 */
final class StatsFile {

    private StatsFile() {
    }

    /** The summary as JSON text. */
    static String toJson(String fabric, String rules, RunStats stats, Map<String, EngineStats> engines) {
        return toJson(fabric, rules, stats, engines, null, null);
    }

    /** The summary as JSON text, with the resolver's counters unless {@code resolver} is {@code null}. */
    static String toJson(String fabric, String rules, RunStats stats, Map<String, EngineStats> engines,
                         Map<String, Long> resolver) {
        return toJson(fabric, rules, stats, engines, resolver, null);
    }

    /**
     * The summary as JSON text, with the resolver's counters unless {@code resolver} is {@code null}, and the
     * routing record of {@code routes} unless it is {@code null}.
     */
    static String toJson(String fabric, String rules, RunStats stats, Map<String, EngineStats> engines,
                         Map<String, Long> resolver, RouteStats routes) {
        JsonWriter json = new JsonWriter().beginObject()
                .member("fabric", fabric)
                .member("rules", rules);
        json.beginObject("connections")
                .member("rdma", stats.fabricConnections())
                .member("tcp", stats.tcpConnections())
                .endObject();
        json.beginObject("bytes")
                .member("rdma", stats.fabricBytes())
                .member("tcp", stats.tcpBytes())
                .endObject();
        json.beginObject("engines");
        for (Map.Entry<String, EngineStats> e : new TreeMap<>(engines).entrySet()) {
            EngineStats s = e.getValue();
            json.beginObject(e.getKey())
                    .member("connectionsOpened", s.connectionsOpened())
                    .member("connectionsFailed", s.connectionsFailed())
                    .member("bytesSent", s.bytesSent())
                    .member("bytesReceived", s.bytesReceived())
                    .member("frames", s.framesSent())
                    .member("creditFrames", s.creditFramesSent())
                    .member("inlineFrames", s.inlineFramesSent())
                    .member("creditStalls", s.creditStalls())
                    .member("receiverNotReady", s.receiverNotReady())
                    .member("protocolErrors", s.protocolErrors())
                    .endObject();
        }
        json.endObject();
        json.member("crowdedSpins", SpinWait.crowdedSpells());
        if (resolver != null) {
            json.beginObject("resolver");
            for (Map.Entry<String, Long> e : resolver.entrySet()) {
                json.member(e.getKey(), e.getValue());
            }
            json.endObject();
        }
        if (routes != null) {
            routesToJson(json, routes, engines);
        }
        return json.endObject().finish();
    }

    /** Sockets routed per rule, fallbacks with their reasons, and the engines' stall and RNR totals. */
    private static void routesToJson(JsonWriter json, RouteStats routes, Map<String, EngineStats> engines) {
        json.beginObject("routedApis").member("nio", "routed").member("javaNet", RoutedApis.javaNet())
            .member("asyncChannels", RoutedApis.asyncChannels()).endObject();
        json.beginObject("routedByRule");
        routes.byRule().forEach(json::member);
        json.endObject();
        json.beginObject("fallbacks").member("count", routes.fallbacks()).beginObject("reasons");
        routes.fallbackReasons().forEach(json::member);
        json.endObject().endObject();
        long stalls = 0;
        long rnr = 0;
        for (EngineStats s : engines.values()) {
            stalls += s.creditStalls();
            rnr += s.receiverNotReady();
        }
        json.member("creditStalls", stalls).member("receiverNotReady", rnr);
        Map<String, String> bypassed = BypassedTransports.seen();
        if (!bypassed.isEmpty()) {
            json.beginObject("bypassed");
            bypassed.forEach(json::member);
            json.endObject();
        }
    }

    /** Writes the summary of this process now, with the engines the fabric choice handed out. */
    static void write(Path file, String fabric, String rules) throws IOException {
        Map<String, EngineStats> engines = new TreeMap<>();
        for (Map.Entry<String, Engine> e : FabricChoice.usedEngines().entrySet()) {
            try {
                engines.put(e.getKey(), e.getValue().stats());
            } catch (RuntimeException ignored) {
                // An engine that fails to report (closed in a half-built state) leaves its counters out; the
                // process-wide counts above it are still right.
            }
        }
        Resolver resolver = Resolver.existing();
        write(file, toJson(fabric, rules, RunStats.get(), engines,
                resolver == null ? null : resolver.stats().snapshot(), RouteStats.get()));
    }

    static void write(Path file, String text) throws IOException {
        Path target = file.toAbsolutePath();
        Path temp = target.resolveSibling(target.getFileName() + ".tmp" + ProcessHandle.current().pid());
        Files.writeString(temp, text, StandardCharsets.UTF_8);
        try {
            Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(temp);
        }
    }
}
