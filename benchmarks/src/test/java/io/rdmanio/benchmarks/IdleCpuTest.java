package io.rdmanio.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The idle-CPU measurement runs its processes to the end on the JDK's TCP and on shm: every connection still
 * echoes after the quiet window, and both processes' CPU time was read. (What the numbers are is for the
 * benchmark report, not for a test.)
 */
@Timeout(180)
class IdleCpuTest {

    @Test
    void measuresBothProcessesAndTheConnectionsSurviveTheQuietWindow() throws Exception {
        List<IdleCpu.Result> results = IdleCpu.orchestrate(List.of(Transport.TCP, Transport.SHM), 1);
        assertEquals(2, results.size());
        for (IdleCpu.Result r : results) {
            if (r.skipped != null) {
                assertEquals("shm", r.transport, "only shm may be unavailable: " + r.skipped);
                continue;
            }
            assertNull(r.error, r.transport + ": " + r.error);
            assertTrue(r.clientMsPerSecond >= 0 && r.serverMsPerSecond >= 0,
                    r.transport + ": " + r.clientMsPerSecond + " / " + r.serverMsPerSecond);
        }
        String table = IdleCpu.table(results);
        assertTrue(table.startsWith("transport"), table);
        assertTrue(IdleCpu.json(results, 1).contains("\"transport\": \"tcp\", \"clientCpuMsPerSecond\": "),
                IdleCpu.json(results, 1));
    }
}
