package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Many threads on one engine at once: one thread per connection end streaming and waiting, and extra threads
 * calling progress() as selectors would. Completions may be handled by any of them.
 */
class ConcurrentProgressTest {

    @Test
    void connectionThreadsAndProgressThreadsShareTheEngines() throws Exception {
        EngineConfig config = EngineConfig.DEFAULT.withSlotSize(2048).withRingDepth(3).withSpinMicros(20);
        try (Pair p = new Pair(config, 21)) {
            int pairs = 4;
            List<Thread> threads = new ArrayList<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Streams[][] streams = new Streams[pairs][2];
            for (int i = 0; i < pairs; i++) {
                FabricConnection[] cs = p.connect();
                streams[i][0] = new Streams(1 << 20, 100 + i);
                streams[i][1] = new Streams(1 << 20, 200 + i);
                for (int side = 0; side < 2; side++) {
                    Connection me = cs[side];
                    Streams out = streams[i][side];
                    Streams in = streams[i][1 - side];
                    long seed = i * 2L + side;
                    threads.add(new Thread(() -> {
                        try {
                            Random r = new Random(seed);
                            ByteBuffer w = r.nextBoolean() ? ByteBuffer.allocateDirect(5000) : ByteBuffer.allocate(5000);
                            ByteBuffer b = ByteBuffer.allocate(5000);
                            while (!out.writerDone() || !in.readerDone()) {
                                boolean moved = !out.writerDone() && out.write(me, w, Streams.size(r, 5000)) > 0;
                                moved |= in.read(me, b, Streams.size(r, 5000)) > 0;
                                if (!moved) {
                                    me.await((out.writerDone() ? 0 : Readiness.WRITE) | Readiness.READ, 10_000_000_000L);
                                }
                            }
                            me.shutdownOutput();
                            while (in.read(me, b, 5000) != -1) {
                                me.await(Readiness.READ, 10_000_000_000L);
                            }
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                        }
                    }, "conn-" + i + "-" + side));
                }
            }
            AtomicBoolean stop = new AtomicBoolean();
            for (Engine e : new Engine[] {p.client, p.server}) {
                threads.add(new Thread(() -> {
                    while (!stop.get()) {
                        if (e.progress() == 0) {
                            Thread.yield();
                        }
                    }
                }, "progress-" + e));
            }
            threads.forEach(Thread::start);
            for (Thread t : threads.subList(0, pairs * 2)) {
                t.join(60_000);
                if (failure.get() != null) {
                    stop.set(true);
                    throw new AssertionError("a connection thread failed", failure.get());
                }
                assertFalse(t.isAlive(), t.getName() + " is stuck");
            }
            stop.set(true);
            for (Thread t : threads) {
                t.join(20_000);
            }
            for (Streams[] s : streams) {
                s[0].assertChecksumsMatch();
                s[1].assertChecksumsMatch();
            }
            assertEquals(0, p.fabric.receiverNotReadyCount());
            assertEquals(0, p.client.stats().receiverNotReady() + p.server.stats().receiverNotReady());
        }
    }
}
