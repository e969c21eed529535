package io.rdmanio.selector.config;

/**
 * A rules file has an error. The message reads {@code FILE:LINE: reason (the offending text)}, the form compilers
 * and editors understand.
 */
public final class RulesException extends ConfigException {

    private static final long serialVersionUID = 1L;

    private final String file;
    private final int line;
    private final String reason;

    public RulesException(String file, int line, String reason, String text) {
        super(file + ":" + line + ": " + reason + " (" + text + ")");
        this.file = file;
        this.line = line;
        this.reason = reason;
    }

    /** The rules file, as it was named. */
    public String file() {
        return file;
    }

    /** The 1-based line of the error. */
    public int line() {
        return line;
    }

    /** The reason, without file, line and text. */
    public String reason() {
        return reason;
    }
}
