package io.rdmanio.selector.config;

/**
 * A routing decision.
 *
 * @param action what to do
 * @param rule   the rule that decided, as {@code FILE:LINE: TEXT}, or {@code null} when no rule matched
 */
public record Route(Action action, String rule) {

    /** No rule matched: the JDK's TCP. */
    public static final Route NO_MATCH = new Route(Action.TCP, null);

    public boolean usesFabric() {
        return action != Action.TCP;
    }
}
