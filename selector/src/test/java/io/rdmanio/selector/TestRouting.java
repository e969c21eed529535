package io.rdmanio.selector;

import io.rdmanio.selector.config.Action;
import io.rdmanio.selector.config.EngineSource;
import io.rdmanio.selector.config.RdmanioConfig;
import io.rdmanio.selector.config.Route;
import io.rdmanio.selector.config.Router;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.function.Predicate;

/** Routers and configurations for tests: everything on TCP, or chosen addresses on a fabric. */
final class TestRouting {

    private TestRouting() {
    }

    static final EngineSource NO_FABRIC = (peer, listening) -> {
        throw new IOException("no fabric in this test can carry " + peer);
    };

    /** Every socket on the JDK's TCP. */
    static RdmanioConfig allTcp() {
        return new RdmanioConfig(router(a -> false), NO_FABRIC, "none", null);
    }

    /** Sockets whose address matches {@code onFabric} (bind and connect alike) go to {@code engines}. */
    static RdmanioConfig fabricFor(Predicate<InetSocketAddress> onFabric, EngineSource engines, String fabric) {
        return new RdmanioConfig(router(onFabric), engines, fabric, null);
    }

    static Router router(Predicate<InetSocketAddress> onFabric) {
        Route rdma = new Route(Action.RDMA, "test: fabric");
        return new Router() {
            @Override
            public Route forBind(InetSocketAddress local) {
                return onFabric.test(local) ? rdma : Route.NO_MATCH;
            }

            @Override
            public Route forConnect(InetSocketAddress remote) {
                return onFabric.test(remote) ? rdma : Route.NO_MATCH;
            }
        };
    }
}
