package io.rdmanio.selector.config;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code -Drdmanio.debug=routing} (or {@code all}): rdmanio's decisions printed on stderr as they are made, like
 * {@code javax.net.debug}, whether or not the application has an SLF4J provider. Read once, at the provider's
 * start; unset, nothing is printed. Categories: {@code routing} (each bind and connect: which transport, by which
 * rule; each fallback to TCP, with its reason).
 *
 * <p>Thread-safe.
 */
public final class Debug {

    public static final String PROPERTY = "rdmanio.debug";
    static final List<String> CATEGORIES = List.of("routing", "all");

    private static volatile PrintStream out = System.err;
    private static final boolean ROUTING = parse(System.getProperty(PROPERTY)).contains("routing");

    private Debug() {
    }

    /** The categories {@code value} names ({@code all}: every one); unknown names are left out. */
    static Set<String> parse(String value) {
        Set<String> on = new LinkedHashSet<>();
        if (value == null) {
            return on;
        }
        for (String part : value.split(",")) {
            String p = part.trim().toLowerCase(Locale.ROOT);
            if (p.equals("all")) {
                on.add("routing");
            } else if (CATEGORIES.contains(p)) {
                on.add(p);
            }
        }
        return on;
    }

    /** The names in {@code value} that are no category, for a warning at start. */
    static List<String> unknown(String value) {
        List<String> bad = new ArrayList<>();
        if (value != null) {
            for (String part : value.split(",")) {
                String p = part.trim().toLowerCase(Locale.ROOT);
                if (!p.isEmpty() && !CATEGORIES.contains(p)) {
                    bad.add(part.trim());
                }
            }
        }
        return bad;
    }

    static boolean routing() {
        return ROUTING;
    }

    /** Prints one line of {@code category}. */
    static void print(String category, String line) {
        out.println("rdmanio[" + category + "]: " + line);
    }

    /** Tests only: where lines go. */
    static void printTo(PrintStream stream) {
        out = stream;
    }
}
