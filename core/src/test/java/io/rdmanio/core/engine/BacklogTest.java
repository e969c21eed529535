package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The backlog is a limit, as Linux's, and never a refusal: of a burst of connects to a listener of backlog 50 that
 * does not accept yet, 51 complete and the others wait (TCP's clients retry their SYNs); as the application accepts,
 * every one of them completes, none refused. Applications pass small backlogs such as the default 50.
 */
class BacklogTest {

    private static final EngineConfig CONFIG = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(2);

    @Test
    void aBurstBeyondASmallBacklogWaitsForAcceptsAndIsNotRefused() throws Exception {
        int connects = 300;
        try (Pair p = new Pair(CONFIG)) {
            Listener small = p.server.listen(new InetSocketAddress("127.0.0.1", 0), 50, ConnectionOptions.DEFAULT);
            List<Connection> clients = new ArrayList<>();
            for (int i = 0; i < connects; i++) {
                clients.add(p.client.connect(small.localAddress(), ConnectionOptions.DEFAULT));
            }
            p.await("the accept queue full", () -> connected(clients) == 51);
            long until = System.nanoTime() + 200_000_000L;
            p.await("a while", () -> System.nanoTime() - until > 0);
            assertEquals(51, connected(clients), "backlog + 1 connects complete before an accept, the rest wait");
            for (int i = 0; i < connects; i++) {
                Connection[] a = {null};
                p.await("connection " + i + " to accept", () -> {
                    try {
                        a[0] = small.accept();
                    } catch (IOException e) {
                        throw new AssertionError(e);
                    }
                    return a[0] != null;
                });
                assertNotNull(a[0]);
                a[0].close();
            }
            p.await("every client connected", () -> connected(clients) == connects);
            for (Connection c : clients) {
                c.close();
            }
            small.close();
        }
    }

    /** How many of the clients have connected; a refused one fails the test. */
    private static int connected(List<Connection> clients) {
        int n = 0;
        for (Connection c : clients) {
            try {
                n += c.finishConnect() ? 1 : 0;
            } catch (IOException e) {
                throw new AssertionError("a connect beyond the backlog of 50 was refused", e);
            }
        }
        return n;
    }
}
