package io.rdmanio.core;

import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.helpers.NOPLogger;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * rdmanio's loggers. SLF4J is the logging API, and rdmanio's lines go to the application's SLF4J provider when it
 * has one; when it has none they go nowhere, silently. Asking SLF4J itself for a logger in a JVM without a
 * provider prints SLF4J's three-line "No SLF4J providers were found" notice on stderr, in every program started
 * with the agent, even one that never opens a routed socket: a transport that is meant to change nothing but the
 * transport must not write to the application's stderr.
 *
 * <p>Thread-safe; the provider is looked up once, with the class loader that loaded rdmanio (where SLF4J's own
 * lookup would look), or named by SLF4J's {@code slf4j.provider} property.
 */
public final class Logs {

    /**
     * rdmanio's SLF4J is not the application's: the agent jar carries the API relocated, and rdmanio's lines reach
     * the application's SLF4J through {@link ApplicationLogger}.
     */
    private static final boolean RELOCATED =
        !LoggerFactory.class.getName().equals(String.join(".", "org", "slf4j", "LoggerFactory"));
    private static final boolean PROVIDED = providerPresent();

    private Logs() {
    }

    /** The logger of {@code type}: SLF4J's when the application has a provider, else one that drops every line. */
    public static Logger get(Class<?> type) {
        return get(type.getName());
    }

    /** The logger named {@code name}, as {@link #get(Class)}. */
    public static Logger get(String name) {
        if (PROVIDED) {
            return LoggerFactory.getLogger(name);
        }
        return RELOCATED ? new ApplicationLogger(name) : NOPLogger.NOP_LOGGER;
    }

    /**
     * Binds SLF4J now, without its "No SLF4J providers were found" notice, where the application has no provider:
     * for third-party code rdmanio loads that asks SLF4J's {@code LoggerFactory} itself (DiSNI does, when the disni
     * fabric opens), which would otherwise print the notice into a program that never used SLF4J. SLF4J reads its
     * report level once, when it first reports; an application that set {@code slf4j.internal.verbosity} itself
     * keeps its setting.
     */
    public static void bindQuietly() {
        if (PROVIDED) {
            return;
        }
        synchronized (Logs.class) {
            String key = "slf4j.internal.verbosity";
            boolean set = System.getProperty(key) == null;
            if (set) {
                System.setProperty(key, "ERROR");
            }
            try {
                LoggerFactory.getILoggerFactory();
            } catch (RuntimeException | LinkageError e) {
                // SLF4J unusable: DiSNI's own call will say so, as it would have.
            } finally {
                if (set) {
                    System.clearProperty(key);
                }
            }
        }
    }

    private static boolean providerPresent() {
        if (RELOCATED) {
            // The relocated API has no provider of its own; the property names the application's.
            return false;
        }
        if (System.getProperty("slf4j.provider") != null) {
            return true;
        }
        try {
            return ServiceLoader.load(SLF4JServiceProvider.class, Logs.class.getClassLoader()).iterator().hasNext();
        } catch (ServiceConfigurationError | RuntimeException | LinkageError e) {
            // A broken provider: SLF4J would report it; rdmanio stays quiet rather than fail the program.
            return false;
        }
    }
}
