package io.rdmanio.selector.config;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Which of the JDK's socket APIs the agent put under the rules in this process, for the stats file: NIO channels
 * always (the provider is rdmanio's); java.net and NIO.2 as their installers found them ({@code routed}, or
 * {@code not routed: REASON}). Thread-safe.
 */
public final class RoutedApis {

    private static volatile String javaNet = "not routed: the agent did not run";
    private static volatile String asyncChannels = "not routed: the agent did not run";

    private RoutedApis() {
    }

    /**
     * Why an API that {@code property} switches is to stay unrouted, before anything is installed for it:
     * {@code -Dproperty=false}, or rules that route nothing; null when it may be routed.
     */
    public static String notRoutedReason(String property, Router router) {
        if (switchedOff(System.getProperty(property))) {
            return "not routed: -D" + property + "=false";
        }
        if (router.routesNothing()) {
            return "not routed: no rule routes a socket to a fabric";
        }
        return null;
    }

    /** Whether a switch's value turns it off ({@code false}, any case). */
    static boolean switchedOff(String value) {
        return value != null && value.trim().equalsIgnoreCase("false");
    }

    public static void javaNet(String state) {
        javaNet = state;
    }

    public static void asyncChannels(String state) {
        asyncChannels = state;
    }

    /** {@code nio}, {@code javaNet} and {@code asyncChannels} to their states, in that order. */
    static Map<String, String> states() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("nio", "routed");
        m.put("javaNet", javaNet);
        m.put("asyncChannels", asyncChannels);
        return m;
    }

    static String javaNet() {
        return javaNet;
    }

    static String asyncChannels() {
        return asyncChannels;
    }
}
