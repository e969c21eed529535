package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * An orderly close whose DISCONNECTED event is handled before the peer's last frames: many peers close at once
 * while the accepting engine is not polling, so their data and FIN completions queue up behind more than one poll
 * batch while every DISCONNECTED event is already waiting. Each accepted side must still read every byte and then
 * end of stream, never "Connection reset by peer". Deep rings and several frames per connection put more
 * completions in one queue than a progress call drains.
 */
class DisconnectBehindFinTest {

    private static final EngineConfig CONFIG = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(16);
    private static final int CONNECTIONS = 300;
    private static final int BYTES = 16000;

    @Test
    void disconnectQueuedAheadOfTheFinIsStillAnOrderlyEnd() throws Exception {
        try (Pair p = new Pair(CONFIG)) {
            FabricConnection[][] cs = new FabricConnection[CONNECTIONS][];
            for (int i = 0; i < CONNECTIONS; i++) {
                cs[i] = p.connect();
            }
            for (int i = 0; i < CONNECTIONS; i++) {
                byte[] data = new byte[BYTES];
                Arrays.fill(data, (byte) i);
                assertEquals(BYTES, Pair.write(cs[i][0], ByteBuffer.wrap(data)));
                cs[i][0].close();
            }
            // Only the closing side makes progress: its frames land in the accepting side's completion queue and
            // its disconnects in the accepting side's event channel, all unseen until the accepting side polls.
            long deadline = System.nanoTime() + Pair.TIMEOUT_NANOS;
            while (p.client.progress() > 0 && System.nanoTime() - deadline < 0) {
                Thread.onSpinWait();
            }
            for (int i = 0; i < CONNECTIONS; i++) {
                final int index = i;
                FabricConnection server = cs[i][1];
                ByteBuffer got = ByteBuffer.allocate(BYTES + 1);
                p.await("end of stream on connection " + i, () -> {
                    try {
                        return Pair.read(server, got) == -1;
                    } catch (IOException e) {
                        throw new AssertionError("connection " + index + " after " + got.position() + " bytes", e);
                    }
                });
                assertEquals(BYTES, got.position(), "bytes before end of stream on connection " + i);
                for (int j = 0; j < BYTES; j++) {
                    assertEquals((byte) i, got.get(j));
                }
                server.close();
            }
        }
    }
}
