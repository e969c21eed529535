package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.*;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The engine's connections by queue-pair number: a model check against a plain map. */
class QpTableTest {

    @Test
    void agreesWithAMapOverRandomPutsAndRemovesAcrossPages() {
        QpTable<String> table = new QpTable<>();
        Map<Integer, String> model = new HashMap<>();
        Random r = new Random(5);
        for (int step = 0; step < 200_000; step++) {
            // Numbers clustered on a few pages and some anywhere in 24 bits: pages are made and dropped.
            int qp = r.nextBoolean() ? r.nextInt(3 << 12) : r.nextInt(1 << 24);
            if (r.nextInt(3) == 0) {
                String v = "c" + step;
                table.put(qp, v);
                model.put(qp, v);
            } else {
                String current = model.get(qp);
                // Removing someone else's entry (a torn-down connection's number reused) leaves it.
                String stale = r.nextBoolean() ? current : "other";
                table.remove(qp, stale);
                if (current != null && current.equals(stale)) {
                    model.remove(qp);
                }
            }
            int probe = r.nextInt(1 << 24);
            assertEquals(model.get(probe), table.get(probe));
            assertEquals(model.get(qp), table.get(qp));
        }
        assertEquals(model.size(), table.size());
        for (Map.Entry<Integer, String> e : model.entrySet()) {
            assertEquals(e.getValue(), table.get(e.getKey()));
        }
    }

    @Test
    void numbersBeyondTwentyFourBitsAreNeverFoundAndRefusedOnPut() {
        QpTable<String> table = new QpTable<>();
        table.put(0xffffff, "top");
        assertEquals("top", table.get(0xffffff));
        assertNull(table.get(1 << 24));
        assertNull(table.get(-1));
        assertThrows(IllegalArgumentException.class, () -> table.put(1 << 24, "x"));
        table.remove(-1, "top");
        assertEquals(1, table.size());
    }
}
