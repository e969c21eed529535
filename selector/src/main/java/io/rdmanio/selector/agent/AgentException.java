package io.rdmanio.selector.agent;

/** The agent cannot start: an option it does not know or cannot use, or a JVM it cannot install itself in. */
final class AgentException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    AgentException(String message) {
        super(message);
    }
}
