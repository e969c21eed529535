package io.rdmanio.selector;

import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.ReadinessListener;
import java.nio.channels.SelectableChannel;

/**
 * The one small interface between {@link RdmaSelector} and this provider's channels. A channel starts unrouted
 * and is routed once, to a JDK channel ({@link #ROUTE_DELEGATE}) or to a fabric endpoint ({@link #ROUTE_FABRIC});
 * its keys follow it there at their selector's next select.
 *
 * <p>{@link #route()} may be read from any thread. The route moves away from {@link #ROUTE_NONE} once, except for
 * a client under a {@code both} rule whose fabric fails to connect: it goes back to {@link #ROUTE_NONE} and then to
 * {@link #ROUTE_DELEGATE}, once.
 */
interface RoutedChannel {

    int ROUTE_NONE = 0;
    int ROUTE_DELEGATE = 1;
    int ROUTE_FABRIC = 2;
    /** A server listening on a fabric and on the JDK's TCP: readiness from both, the JDK channel non-blocking. */
    int ROUTE_BOTH = 3;

    int route();

    /** The JDK channel carrying this one once routed to {@link #ROUTE_DELEGATE} or {@link #ROUTE_BOTH}. */
    SelectableChannel delegate();

    /** Once routed to a fabric (or both): the fabric's ready operations, as java.nio reports them. */
    int fabricReadyOps();

    Engine fabricEngine();

    /**
     * When a pending fabric connect becomes ready without any event from the fabric ({@link System#nanoTime()}:
     * a client under a {@code both} rule moves to TCP then), or 0 if there is no such time.
     */
    default long fabricDeadline() {
        return 0;
    }

    void addFabricListener(ReadinessListener listener);

    void removeFabricListener(ReadinessListener listener);

    /** A key was created for this channel: it is told when the channel is routed. */
    void attachKey(RdmaSelectionKey key);

    void detachKey(RdmaSelectionKey key);
}
