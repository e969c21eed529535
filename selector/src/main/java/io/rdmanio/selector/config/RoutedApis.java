package io.rdmanio.selector.config;

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

    public static void javaNet(String state) {
        javaNet = state;
    }

    public static void asyncChannels(String state) {
        asyncChannels = state;
    }

    static String javaNet() {
        return javaNet;
    }

    static String asyncChannels() {
        return asyncChannels;
    }
}
