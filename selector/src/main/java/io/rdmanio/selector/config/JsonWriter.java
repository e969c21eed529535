package io.rdmanio.selector.config;

import java.util.List;

/**
 * A small JSON text builder for the run summary and the doctor: objects, strings, arrays of strings, numbers,
 * booleans and null, indented two spaces.
 * The caller nests {@link #beginObject}/{@link #endObject} correctly; names and values are escaped here.
 *
 * <p>Not thread-safe.
 */
final class JsonWriter {

    private final StringBuilder out = new StringBuilder(256);
    private int depth;
    /** Whether the current object has a member already (so the next one needs a comma). */
    private boolean hasMember;

    /** Opens the top-level object. */
    JsonWriter beginObject() {
        out.append('{');
        depth++;
        hasMember = false;
        return this;
    }

    /** Opens an object as the value of member {@code name}. */
    JsonWriter beginObject(String name) {
        name(name);
        return beginObject();
    }

    JsonWriter endObject() {
        if (depth == 0) {
            throw new IllegalStateException("no object is open");
        }
        depth--;
        if (hasMember) {
            newline();
        }
        out.append('}');
        hasMember = true;
        return this;
    }

    JsonWriter member(String name, long value) {
        name(name);
        out.append(value);
        hasMember = true;
        return this;
    }

    JsonWriter member(String name, boolean value) {
        name(name);
        out.append(value);
        hasMember = true;
        return this;
    }

    /** A string member; {@code null} is written as JSON null. */
    JsonWriter member(String name, String value) {
        name(name);
        if (value == null) {
            out.append("null");
        } else {
            string(value);
        }
        hasMember = true;
        return this;
    }

    /** An array of strings as member {@code name}, one element a line. */
    JsonWriter member(String name, List<String> values) {
        name(name);
        out.append('[');
        depth++;
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            newline();
            string(values.get(i));
        }
        depth--;
        if (!values.isEmpty()) {
            newline();
        }
        out.append(']');
        hasMember = true;
        return this;
    }

    /** The finished text, with a final newline. */
    String finish() {
        if (depth != 0) {
            throw new IllegalStateException(depth + " objects still open");
        }
        return out.toString() + "\n";
    }

    private void name(String name) {
        if (depth == 0) {
            throw new IllegalStateException("a member needs an open object");
        }
        if (hasMember) {
            out.append(',');
        }
        newline();
        string(name);
        out.append(": ");
    }

    private void newline() {
        out.append('\n');
        for (int i = 0; i < depth; i++) {
            out.append("  ");
        }
    }

    private void string(String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    out.append("\\\"");
                    break;
                case '\\':
                    out.append("\\\\");
                    break;
                case '\n':
                    out.append("\\n");
                    break;
                case '\r':
                    out.append("\\r");
                    break;
                case '\t':
                    out.append("\\t");
                    break;
                case '\b':
                    out.append("\\b");
                    break;
                case '\f':
                    out.append("\\f");
                    break;
                default:
                    // Other control characters, and the line separators JavaScript does not allow in strings.
                    if (c < 0x20 || c == '\u2028' || c == '\u2029') {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }
}
