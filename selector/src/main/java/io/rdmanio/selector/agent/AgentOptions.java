package io.rdmanio.selector.agent;

import io.rdmanio.selector.config.ConfigLoader;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The agent's options, {@code key=value} pairs separated by commas, each standing for one {@code rdmanio.*}
 * system property. An option given to the agent wins over the same property given with {@code -D}. Immutable.
 */
final class AgentOptions {

    /** Option name to the system property it sets; the order is the one error messages list them in. */
    static final Map<String, String> PROPERTIES;

    static {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("rules", ConfigLoader.RULES);
        m.put("fabric", ConfigLoader.FABRIC);
        m.put("stats", ConfigLoader.STATS);
        m.put("fallbackMillis", "rdmanio.fallbackMillis");
        m.put("debug", io.rdmanio.selector.config.Debug.PROPERTY);
        PROPERTIES = java.util.Collections.unmodifiableMap(m);
    }

    private final Map<String, String> values;

    private AgentOptions(Map<String, String> values) {
        this.values = values;
    }

    Map<String, String> values() {
        return values;
    }

    /**
     * Parses the text after {@code =} in {@code -javaagent:JAR=...}; {@code null} or empty means no options.
     *
     * @throws AgentException naming the option that is unknown, repeated, empty or without a value
     */
    static AgentOptions parse(String args) {
        Map<String, String> values = new LinkedHashMap<>();
        if (args == null || args.isEmpty()) {
            return new AgentOptions(values);
        }
        for (String item : args.split(",", -1)) {
            int eq = item.indexOf('=');
            String key = eq < 0 ? item.trim() : item.substring(0, eq).trim();
            if (key.isEmpty()) {
                throw new AgentException("empty agent option in '" + args + "': expected key=value pairs separated"
                        + " by commas, keys " + known());
            }
            if (!PROPERTIES.containsKey(key)) {
                throw new AgentException("unknown agent option '" + key + "' in '" + args + "': expected "
                        + known());
            }
            if (eq < 0 || item.substring(eq + 1).trim().isEmpty()) {
                throw new AgentException("agent option '" + key + "' has no value: expected " + key + "=VALUE");
            }
            if (values.put(key, item.substring(eq + 1).trim()) != null) {
                throw new AgentException("agent option '" + key + "' is given twice in '" + args + "'");
            }
        }
        return new AgentOptions(values);
    }

    private static String known() {
        return String.join(", ", PROPERTIES.keySet());
    }

    void applyTo(Properties system) {
        values.forEach((k, v) -> system.setProperty(PROPERTIES.get(k), v));
    }
}
