package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * rdmanio's JDK Flight Recorder events, recorded as an operator would (a recording of this JVM, read back from
 * its file): a connection opened on each side with its setup time, a write that found no credit, a refused
 * connect with its message.
 */
class FlightRecorderEventsTest {

    private static final EngineConfig SMALL = EngineConfig.DEFAULT.withSlotSize(1024).withRingDepth(2)
        .withSpinMicros(0);

    @Test
    void connectStallAndFailureAreRecorded(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rdmanio.jfr");
        int port;
        try (Recording r = new Recording()) {
            for (String name : List.of("io.rdmanio.ConnectionOpened", "io.rdmanio.ConnectionFailed",
                "io.rdmanio.CreditStall")) {
                r.enable(name).withThreshold(Duration.ZERO);
            }
            r.start();
            try (Pair p = new Pair(SMALL, 1L, false, Pair.ringOnly(SMALL))) {
                port = p.listener.localAddress().getPort();
                FabricConnection[] cs = p.connect();
                // The peer does not read (its window sized by SO_RCVBUF, so it holds its ring alone): writes fill
                // its ring and this side's staging, then take nothing.
                ByteBuffer b = ByteBuffer.allocate(4096);
                long zeros = 0;
                for (int i = 0; i < 100 && zeros < 3; i++) {
                    b.clear();
                    if (Pair.write(cs[0], b) == 0) {
                        zeros++;
                    }
                }
                assertEquals(3, zeros, "the writer stalled");
                Connection refused = p.client.connect(new InetSocketAddress("127.0.0.1", 9),
                    ConnectionOptions.DEFAULT);
                p.await("refusal", () -> {
                    try {
                        return refused.finishConnect() && false;
                    } catch (ConnectException e) {
                        return true;
                    } catch (IOException e) {
                        throw new AssertionError(e);
                    }
                });
                refused.close();
            }
            r.stop();
            r.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        List<RecordedEvent> opened = of(events, "io.rdmanio.ConnectionOpened");
        assertEquals(2, opened.size(), () -> describe(events));
        assertEquals(List.of("client", "server"),
            opened.stream().map(e -> e.getString("side")).sorted().collect(Collectors.toList()));
        for (RecordedEvent e : opened) {
            assertEquals("loopback", e.getString("fabric"));
            assertTrue(e.getLong("setup") > 0, () -> describe(events));
        }
        RecordedEvent client = opened.stream().filter(e -> e.getString("side").equals("client")).findFirst()
            .orElseThrow();
        assertTrue(client.getString("remote").endsWith(":" + port), client::toString);
        List<RecordedEvent> stalls = of(events, "io.rdmanio.CreditStall");
        assertFalse(stalls.isEmpty(), () -> describe(events));
        assertTrue(stalls.get(0).getString("remote").endsWith(":" + port), stalls.get(0)::toString);
        // The refused connect's; the stalled connection may fail too when the engines close under it (a reset, if
        // the closer took the server engine's disconnect before the client engine closed).
        List<RecordedEvent> failed = of(events, "io.rdmanio.ConnectionFailed").stream()
            .filter(e -> e.getString("remote").endsWith(":9")).collect(Collectors.toList());
        assertEquals(1, failed.size(), () -> describe(events));
        assertTrue(failed.get(0).getString("message").startsWith("Connection refused: "), failed.get(0)::toString);
        assertTrue(failed.get(0).getString("remote").endsWith(":9"), failed.get(0)::toString);
        assertFalse(failed.get(0).getBoolean("protocolError"));
    }

    private static List<RecordedEvent> of(List<RecordedEvent> events, String name) {
        return events.stream().filter(e -> e.getEventType().getName().equals(name)).collect(Collectors.toList());
    }

    private static String describe(List<RecordedEvent> events) {
        return events.stream().filter(e -> e.getEventType().getName().startsWith("io.rdmanio."))
            .map(RecordedEvent::toString).collect(Collectors.joining("\n"));
    }
}
