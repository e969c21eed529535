package io.rdmanio.examples.jetty;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

/**
 * What the Jetty example serves and its clients check: a few static files written into a directory (one of
 * several MiB), and dynamic bodies that both sides compute from the request alone.
 */
public final class Content {

    /** The static files, by name; {@link #writeFiles} creates them. */
    public static final List<String> FILES = List.of("index.html", "notes.txt", "blob.bin");
    /** Sizes of the dynamic bodies the clients ask for: empty, small, one that spans many frames. */
    public static final List<Integer> DYNAMIC_SIZES = List.of(0, 100, 3 * 1024 * 1024 + 17);
    public static final String DYNAMIC_PREFIX = "/dynamic/";

    private Content() {
    }

    public static void writeFiles(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("index.html"),
                "<!doctype html><title>rdmanio</title><p>Served by Jetty through rdmanio.</p>\n", StandardCharsets.UTF_8);
        StringBuilder notes = new StringBuilder();
        for (int i = 0; i < 2000; i++) {
            notes.append("line ").append(i).append(": the quick brown fox\n");
        }
        Files.writeString(dir.resolve("notes.txt"), notes, StandardCharsets.UTF_8);
        byte[] blob = new byte[6 * 1024 * 1024 + 123];
        new Random(42).nextBytes(blob);
        Files.write(dir.resolve("blob.bin"), blob);
    }

    /** The body of {@code /dynamic/N}: N bytes derived from N. */
    public static byte[] dynamic(int n) {
        byte[] b = new byte[n];
        new Random(n).nextBytes(b);
        return b;
    }
}
