package io.rdmanio.selector;

import io.rdmanio.core.Logs;
import io.rdmanio.selector.config.RoutedApis;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import org.slf4j.Logger;

/**
 * Puts java.net's {@link Socket} and {@link ServerSocket} under the routing rules: installs the socket
 * implementation factories, whose sockets are {@link RoutingSocketImpl}s. Done by the agent, once, before the
 * application runs; only when the rules can route something (a program whose rules route nothing keeps the JDK's
 * implementations untouched) and {@code rdmanio.javaNet} is not {@code false}.
 *
 * <p>The factories can be set once per JVM: an application that sets its own afterwards gets java.net's
 * "factory already defined" (run it with {@code -Drdmanio.javaNet=false}); one that set its own first keeps it,
 * and the log says that java.net is then not routed. Thread-safe (called once).
 */
public final class JavaNetRouting {

    /** The property that turns java.net routing off ({@code false}); on by default. */
    public static final String PROPERTY = "rdmanio.javaNet";

    private static final Logger LOG = Logs.get("io.rdmanio.routing");

    private JavaNetRouting() {
    }

    /**
     * Installs the factories if the rules route anything; returns whether java.net is now routed. When this JDK's
     * {@code java.net} is not one rdmanio can delegate to, it stays unrouted and the log says why.
     */
    public static boolean install(RdmaSelectorProvider provider) {
        String off = RoutedApis.notRoutedReason(PROPERTY, provider.config().router());
        if (off != null) {
            RoutedApis.javaNet(off);
            return false;
        }
        if (!JdkSocketImpls.available()) {
            // This JDK's java.net is not the one rdmanio knows: better unrouted than broken.
            String state = "not routed: " + JdkSocketImpls.unavailableReason();
            RoutedApis.javaNet(state);
            LOG.warn("rdmanio: java.net sockets are {}; NIO channels are routed", state);
            return false;
        }
        try {
            Socket.setSocketImplFactory(() -> new RoutingSocketImpl(provider, false));
        } catch (IOException e) {
            String state = "not routed: the application (or another agent) installed its own SocketImplFactory";
            RoutedApis.javaNet(state);
            LOG.warn("rdmanio: java.net sockets are {} (Socket.setSocketImplFactory: {}); NIO channels are routed",
                state, e.getMessage());
            return false;
        }
        try {
            ServerSocket.setSocketFactory(() -> new RoutingSocketImpl(provider, true));
        } catch (IOException e) {
            // Clients are routed and servers cannot be: a routed client still reaches NIO servers, and a server
            // socket accepts with its own factory's sockets. Say so rather than undo the client factory (java.net
            // has no way to).
            String state = "clients routed; server sockets not routed: the application (or another agent) installed "
                    + "its own server SocketImplFactory";
            RoutedApis.javaNet(state);
            LOG.warn("rdmanio: java.net {} ({})", state, e.getMessage());
            return true;
        }
        RoutedApis.javaNet("routed");
        return true;
    }
}
