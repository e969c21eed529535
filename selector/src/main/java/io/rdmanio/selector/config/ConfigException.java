package io.rdmanio.selector.config;

/**
 * The rdmanio configuration cannot be used: a rules file with an error, a missing file, an unknown fabric name.
 * The message names the file (and line) or the property, and the reason. Thrown at start, before any socket is
 * routed, so that a misconfigured program stops instead of silently running on TCP.
 */
public class ConfigException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
        super(message);
    }

    public ConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
