package io.rdmanio.selector.config;

import java.net.InetSocketAddress;

/**
 * The rules, with {@code auto} connects decided by the resolver: a connect whose rule says {@code auto} keeps that
 * route (the fabric, with TCP after a failed handshake) when the resolver names a fabric this process can use, and
 * becomes {@code tcp} when it does not. Binds are the rules' own. Thread-safe.
 */
final class ResolvingRouter implements Router {

    private final Rules rules;
    private final AutoRouting auto;

    ResolvingRouter(Rules rules, AutoRouting auto) {
        this.rules = rules;
        this.auto = auto;
    }

    /** The rules underneath. */
    Rules rules() {
        return rules;
    }

    /** The router's rules, whether wrapped or not; {@code null} for any other router. */
    static Rules rulesOf(Router router) {
        if (router instanceof ResolvingRouter) {
            return ((ResolvingRouter) router).rules;
        }
        return router instanceof Rules ? (Rules) router : null;
    }

    @Override
    public Route forBind(InetSocketAddress local) {
        return rules.forBind(local);
    }

    @Override
    public Route forConnect(InetSocketAddress remote) {
        Route r = rules.forConnect(remote);
        if (r.action() != Action.AUTO) {
            return r;
        }
        AutoRouting.Choice choice = auto.resolveAndChoose(remote);
        return choice.fabric() != null ? r : new Route(Action.TCP, r.rule());
    }

    @Override
    public boolean routesNothing() {
        return rules.routesNothing();
    }

    @Override
    public String toString() {
        return "ResolvingRouter[" + rules + "]";
    }
}
