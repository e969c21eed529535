package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A burst of connects larger than the requested backlog succeeds, as it does on Linux's TCP (which retries the
 * SYN rather than refusing): applications pass small backlogs such as the default 50.
 */
class BacklogTest {

    private static final EngineConfig CONFIG = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(2);

    @Test
    void aBurstBeyondASmallBacklogIsNotRefused() throws Exception {
        int connects = 300;
        try (Pair p = new Pair(CONFIG)) {
            Listener small = p.server.listen(new InetSocketAddress("127.0.0.1", 0), 50, ConnectionOptions.DEFAULT);
            List<Connection> clients = new ArrayList<>();
            for (int i = 0; i < connects; i++) {
                clients.add(p.client.connect(small.localAddress(), ConnectionOptions.DEFAULT));
            }
            int[] connected = {0};
            p.await("every client connected", () -> {
                connected[0] = 0;
                for (Connection c : clients) {
                    try {
                        connected[0] += c.finishConnect() ? 1 : 0;
                    } catch (IOException e) {
                        throw new AssertionError("a connect beyond the backlog of 50 was refused", e);
                    }
                }
                return connected[0] == connects;
            });
            for (int i = 0; i < connects; i++) {
                Connection a = small.accept();
                assertNotNull(a, "accepted connection " + i);
                a.close();
            }
            assertEquals(connects, connected[0]);
            for (Connection c : clients) {
                c.close();
            }
            small.close();
        }
    }
}
