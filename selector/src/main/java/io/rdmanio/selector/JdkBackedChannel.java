package io.rdmanio.selector;

import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.ReadinessListener;

/**
 * A channel of this provider that always stands on a JDK channel (a pipe end, a datagram channel): routed to
 * {@link #ROUTE_DELEGATE} from birth, never on a fabric. Its keys live in {@link #delegateKeys()}.
 */
interface JdkBackedChannel extends RoutedChannel {

    DelegateKeys delegateKeys();

    @Override
    default int route() {
        return ROUTE_DELEGATE;
    }

    @Override
    default int fabricReadyOps() {
        return 0;
    }

    @Override
    default Engine fabricEngine() {
        return null;
    }

    @Override
    default void addFabricListener(ReadinessListener listener) {
    }

    @Override
    default void removeFabricListener(ReadinessListener listener) {
    }

    @Override
    default void attachKey(RdmaSelectionKey key) {
        delegateKeys().add(key);
    }

    @Override
    default void detachKey(RdmaSelectionKey key) {
        delegateKeys().remove(key);
    }
}
