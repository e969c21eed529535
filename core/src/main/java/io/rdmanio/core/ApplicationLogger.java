package io.rdmanio.core;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/**
 * A logger of rdmanio that writes to the application's own SLF4J, reached by name through the system class loader.
 * The agent jar carries SLF4J's API relocated (so that an application's SLF4J, in whatever class loader, never
 * meets a second copy: a fat-jar application whose SLF4J sat behind the agent's lost its provider), and a relocated
 * API finds no provider of the application's. This logger bridges the two: on its first use (never at start-up,
 * which must not start the application's logging before its main) it looks for the application's
 * {@code LoggerFactory} beside the agent, and, when the application has a provider, forwards every enabled line,
 * formatted, as a message and a throwable (calls every SLF4J version has). Without one, it drops every line.
 *
 * <p>Outside the agent, where rdmanio's SLF4J is the application's, {@link Logs} never makes one.
 */
final class ApplicationLogger extends LegacyAbstractLogger {

    private static final long serialVersionUID = 1L;

    /** The application's SLF4J: {@code org.slf4j}, spelt so that the agent's relocation leaves it alone. */
    private static final String PACKAGE = String.join(".", "org", "slf4j");

    private static final Object UNRESOLVED = new Object();
    private static volatile Object factory = UNRESOLVED;

    private transient volatile Target target;

    ApplicationLogger(String name) {
        this.name = name;
    }

    /**
     * Whether the application's own SLF4J is reachable and has a provider, without binding it (SLF4J prints a
     * notice when it binds with none).
     */
    static boolean applicationHasProvider(ClassLoader loader) {
        try {
            Class<?> spi = Class.forName(PACKAGE + ".spi.SLF4JServiceProvider", false, loader);
            if (spi == org.slf4j.spi.SLF4JServiceProvider.class) {
                return false;
            }
            if (java.util.ServiceLoader.load(spi, loader).iterator().hasNext()) {
                return true;
            }
        } catch (ClassNotFoundException | LinkageError | java.util.ServiceConfigurationError e) {
            // No SLF4J 2 API there: SLF4J 1.7 binds through a class of the provider's instead.
        }
        try {
            Class.forName(PACKAGE + ".impl.StaticLoggerBinder", false, loader);
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** The application's {@code ILoggerFactory}-backed {@code getLogger(String)}, or {@code null}; looked up once. */
    private static MethodHandle factory() {
        Object f = factory;
        if (f == UNRESOLVED) {
            synchronized (ApplicationLogger.class) {
                f = factory;
                if (f == UNRESOLVED) {
                    f = null;
                    ClassLoader loader = ClassLoader.getSystemClassLoader();
                    if (applicationHasProvider(loader)) {
                        try {
                            Class<?> lf = Class.forName(PACKAGE + ".LoggerFactory", true, loader);
                            Class<?> logger = Class.forName(PACKAGE + ".Logger", false, loader);
                            f = MethodHandles.publicLookup().findStatic(lf, "getLogger",
                                MethodType.methodType(logger, String.class));
                        } catch (ReflectiveOperationException | LinkageError e) {
                            f = null;
                        }
                    }
                    factory = f;
                }
            }
        }
        return (MethodHandle) f;
    }

    /** The application's logger of this name and its calls, or {@link Target#NONE}. */
    private Target target() {
        Target t = target;
        if (t == null) {
            t = Target.NONE;
            MethodHandle f = factory();
            if (f != null) {
                try {
                    Object logger = f.invoke(name);
                    t = new Target(logger);
                } catch (Throwable e) {
                    t = Target.NONE;
                }
            }
            target = t;
        }
        return t;
    }

    @Override
    public boolean isTraceEnabled() {
        return target().enabled(Level.TRACE);
    }

    @Override
    public boolean isDebugEnabled() {
        return target().enabled(Level.DEBUG);
    }

    @Override
    public boolean isInfoEnabled() {
        return target().enabled(Level.INFO);
    }

    @Override
    public boolean isWarnEnabled() {
        return target().enabled(Level.WARN);
    }

    @Override
    public boolean isErrorEnabled() {
        return target().enabled(Level.ERROR);
    }

    @Override
    protected String getFullyQualifiedCallerName() {
        return null;
    }

    @Override
    protected void handleNormalizedLoggingCall(Level level, Marker marker, String messagePattern, Object[] arguments,
                                               Throwable throwable) {
        target().log(level, MessageFormatter.basicArrayFormat(messagePattern, arguments), throwable);
    }

    /** One application logger and its five level checks and five {@code (String, Throwable)} calls. */
    private static final class Target {
        static final Target NONE = new Target();

        private final Object logger;
        private final MethodHandle[] enabled = new MethodHandle[5];
        private final MethodHandle[] log = new MethodHandle[5];

        private Target() {
            this.logger = null;
        }

        Target(Object logger) throws ReflectiveOperationException {
            this.logger = logger;
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            Class<?> type = Class.forName(PACKAGE + ".Logger", false, logger.getClass().getClassLoader());
            String[] names = {"error", "warn", "info", "debug", "trace"};
            for (int i = 0; i < names.length; i++) {
                String n = names[i];
                enabled[i] = lookup.findVirtual(type, "is" + Character.toUpperCase(n.charAt(0)) + n.substring(1)
                    + "Enabled", MethodType.methodType(boolean.class));
                log[i] = lookup.findVirtual(type, n, MethodType.methodType(void.class, String.class, Throwable.class));
            }
        }

        boolean enabled(Level level) {
            if (logger == null) {
                return false;
            }
            try {
                return (boolean) enabled[level.ordinal()].invoke(logger);
            } catch (Throwable e) {
                return false;
            }
        }

        void log(Level level, String message, Throwable throwable) {
            if (logger == null) {
                return;
            }
            try {
                log[level.ordinal()].invoke(logger, message, throwable);
            } catch (Throwable e) {
                // The application's logging failed: rdmanio's line is lost, the application goes on.
            }
        }
    }
}
