package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.EngineStats;
import io.rdmanio.core.engine.Listener;
import io.rdmanio.core.fabric.Notifier;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.InetSocketAddress;
import java.nio.channels.Pipe;
import java.nio.channels.SelectableChannel;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The engine wrappers of the resolver hand every call through, the interface's default methods included. */
class ForwardingEngineTest {

    @Test
    void everyEngineMethodIsForwardedNotLeftToItsDefault() throws Exception {
        for (Method m : Engine.class.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            Method impl = ForwardingEngine.class.getMethod(m.getName(), m.getParameterTypes());
            assertSame(ForwardingEngine.class, impl.getDeclaringClass(), "Engine." + m.getName() + " is not forwarded");
        }
        assertTrue(ForwardingEngine.class.isAssignableFrom(RegisteringEngine.class));
        assertTrue(ForwardingEngine.class.isAssignableFrom(ResolvedEngine.class));
    }

    /**
     * The same for the connection a resolved engine hands out: a default left in place answers for the fabric's
     * connection underneath (urgent data once threw "not supported" on a resolver-routed connection, and
     * {@code SO_OOBINLINE} never reached it).
     */
    @Test
    void everyConnectionMethodIsForwardedNotLeftToItsDefault() throws Exception {
        Class<?> watched = Class.forName(ResolvedEngine.class.getName() + "$Watched");
        assertTrue(Connection.class.isAssignableFrom(watched));
        for (Method m : Connection.class.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            Method impl = watched.getMethod(m.getName(), m.getParameterTypes());
            assertSame(watched, impl.getDeclaringClass(), "Connection." + m.getName() + " is not forwarded");
        }
    }

    @Test
    void theWakeupChannelsAndAWatchedArmReachTheEngineUnderneath() throws Exception {
        Pipe pipe = Pipe.open();
        try {
            List<SelectableChannel> channels = List.of(pipe.source());
            List<String> calls = new ArrayList<>();
            Engine under = new Engine() {
                @Override public String fabricName() { return "under"; }
                @Override public Listener listen(InetSocketAddress l, int b, ConnectionOptions o) { return null; }
                @Override public Connection connect(InetSocketAddress r, ConnectionOptions o) { return null; }
                @Override public int progress() { return 0; }
                @Override public boolean arm(Notifier n) { calls.add("arm"); return true; }
                @Override public List<SelectableChannel> wakeupChannels() { return channels; }
                @Override public boolean arm(Notifier n, List<SelectableChannel> w) {
                    calls.add("arm watching " + w.size());
                    return false;
                }
                @Override public long spinNanos() { return 7; }
                @Override public EngineStats stats() { return null; }
                @Override public void close() { calls.add("close"); }
            };
            Engine wrapper = new ForwardingEngine(under) { };
            assertSame(channels, wrapper.wakeupChannels());
            assertEquals(false, wrapper.arm(() -> { }, channels));
            wrapper.close();
            assertEquals(List.of("arm watching 1", "close"), calls);
            assertEquals(7, wrapper.spinNanos());
        } finally {
            pipe.source().close();
            pipe.sink().close();
        }
    }
}
