package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The {@code rdmanio.debug} switch: its categories, and the names it does not know. */
class DebugTest {

    @Test
    void categoriesAndUnknownNames() {
        assertEquals(Set.of(), Debug.parse(null));
        assertEquals(Set.of("routing"), Debug.parse("routing"));
        assertEquals(Set.of("routing"), Debug.parse(" ALL "));
        assertEquals(Set.of("routing"), Debug.parse("routing,colour"));
        assertEquals(List.of("colour"), Debug.unknown("routing, colour"));
        assertEquals(List.of(), Debug.unknown("all"));
    }
}
