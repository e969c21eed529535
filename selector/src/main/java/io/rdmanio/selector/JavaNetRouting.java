package io.rdmanio.selector;

import io.rdmanio.core.Logs;
import io.rdmanio.selector.config.RoutedApis;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketImpl;
import java.net.SocketImplFactory;
import org.slf4j.Logger;

/**
 * Puts java.net's {@link Socket} and {@link ServerSocket} under the routing rules: installs the socket
 * implementation factories, whose sockets are {@link RoutingSocketImpl}s. Done by the agent, once, before the
 * application runs; only when the rules can route something (a program whose rules route nothing keeps the JDK's
 * implementations untouched) and {@code rdmanio.javaNet} is not {@code false}.
 *
 * <p>java.net takes one factory per JVM. An application that sets its own afterwards gets it: the agent's
 * rewrite of the setters ({@code FactoryHandover}) has rdmanio's factory step aside first ({@link RoutingFactory#run}),
 * the sockets made before stay as they were, and the log and the stats say that java.net is no longer routed. Where
 * that rewrite is not possible the setter refuses as the JDK's does ("factory already defined"; run such an
 * application with {@code -Drdmanio.javaNet=false}). One that set its own first keeps it, and the log says that
 * java.net is then not routed. Thread-safe (called once).
 */
public final class JavaNetRouting {

    /** The property that turns java.net routing off ({@code false}); on by default. */
    public static final String PROPERTY = "rdmanio.javaNet";

    /** The class of rdmanio's factories, by which the rewritten setters recognise them. */
    public static final String FACTORY_CLASS = RoutingFactory.class.getName();

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
            Socket.setSocketImplFactory(new RoutingFactory(provider, false));
        } catch (IOException e) {
            String state = "not routed: the application (or another agent) installed its own SocketImplFactory";
            RoutedApis.javaNet(state);
            LOG.warn("rdmanio: java.net sockets are {} (Socket.setSocketImplFactory: {}); NIO channels are routed",
                state, e.getMessage());
            return false;
        }
        try {
            ServerSocket.setSocketFactory(new RoutingFactory(provider, true));
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

    /**
     * Notes whether the agent could rewrite java.net's factory setters ({@code FactoryHandover}); without, an
     * application's own factory is refused as the JDK refuses a second one.
     */
    public static void handover(boolean rewritten) {
        if (!rewritten) {
            LOG.info("rdmanio: this JVM does not let the agent rewrite java.net's factory setters: an application that"
                + " installs its own SocketImplFactory gets \"factory already defined\" (run it with -D{}=false)",
                PROPERTY);
        }
    }

    /**
     * rdmanio's factory for java.net's client or server sockets. {@link #run} is its handover: called by the
     * rewritten setter when the application installs a factory of its own, it clears java.net's field so that the
     * setter installs the application's, and says that java.net is no longer routed.
     */
    static final class RoutingFactory implements SocketImplFactory, Runnable {

        private final RdmaSelectorProvider provider;
        private final boolean server;

        RoutingFactory(RdmaSelectorProvider provider, boolean server) {
            this.provider = provider;
            this.server = server;
        }

        @Override
        public SocketImpl createSocketImpl() {
            return new RoutingSocketImpl(provider, server);
        }

        /** Runs inside {@code Socket.setSocketImplFactory} (or ServerSocket's), holding that class's lock. */
        @Override
        public void run() {
            Class<?> owner = server ? ServerSocket.class : Socket.class;
            try {
                Field field = owner.getDeclaredField("factory");
                field.setAccessible(true);
                if (field.get(null) != this) {
                    return;
                }
                field.set(null, null);
            } catch (ReflectiveOperationException | RuntimeException e) {
                // The setter then refuses the application's factory, as the JDK's does.
                LOG.warn("rdmanio: cannot hand java.net's {} factory over to the application's: {}",
                    server ? "server socket" : "socket", e.toString());
                return;
            }
            String state = "not routed from now on: the application installed its own "
                + (server ? "server socket factory (ServerSocket.setSocketFactory)"
                    : "socket factory (Socket.setSocketImplFactory)") + "; sockets made before stay as they were";
            RoutedApis.javaNet(state);
            LOG.warn("rdmanio: java.net {} is {}", server ? "ServerSocket" : "Socket", state);
        }
    }
}
