package io.rdmanio.selector.agent;

import io.rdmanio.core.JdkAccess;
import io.rdmanio.selector.JavaNetRouting;
import io.rdmanio.selector.RdmaSelectorProvider;
import io.rdmanio.selector.async.RdmaAsynchronousChannelProvider;
import io.rdmanio.selector.config.ConfigException;
import io.rdmanio.selector.config.ConfigLoader;
import java.lang.instrument.Instrumentation;
import java.nio.channels.spi.SelectorProvider;
import java.util.Map;
import java.util.Set;

/**
 * The one-flag activation: {@code -javaagent:rdmanio-agent.jar[=rules=FILE,fabric=NAME,stats=FILE]}.
 *
 * <p>Before the application's {@code main} runs, {@link #premain} checks the options, sets the matching
 * {@code rdmanio.*} system properties, exports {@code sun.nio.ch} (and {@code jdk.internal.access}, for the exit
 * hook that runs after the application's) to the class path (so that no {@code --add-exports} flag is needed), loads the configuration, and installs {@link RdmaSelectorProvider} as the
 * JVM's {@link SelectorProvider} and, when the rules route anything, java.net's socket factories
 * ({@link JavaNetRouting}) and NIO.2's provider ({@link RdmaAsynchronousChannelProvider}). Any problem stops the JVM there with one line on stderr that starts with
 * {@code rdmanio: } and names the option, file, line or property at fault: a program started with a broken
 * configuration must not quietly run on TCP.
 *
 * <p>Runs once, on the JVM's main thread, before the application.
 */
public final class RdmanioAgent {

    /** The JDK reads this property the first time anything asks for {@link SelectorProvider#provider()}. */
    static final String PROVIDER_PROPERTY = "java.nio.channels.spi.SelectorProvider";

    private RdmanioAgent() {
    }

    public static void premain(String args, Instrumentation inst) {
        try {
            activate(args, inst);
        } catch (AgentException e) {
            System.err.println("rdmanio: " + e.getMessage());
            stop();
        } catch (ConfigException e) {
            // ConfigLoader.load printed its line (file:line: reason) on stderr already.
            stop();
        } catch (RuntimeException | Error e) {
            System.err.println("rdmanio: cannot start the agent: " + e);
            e.printStackTrace();
            stop();
        }
    }

    /**
     * Stops the JVM with status 1. An exception thrown out of premain would make the JVM abort (a fatal error,
     * a core dump where enabled, and a stack trace that hides the message); exit is the clean way to refuse.
     */
    private static void stop() {
        System.err.flush();
        System.exit(1);
    }

    static void activate(String args, Instrumentation inst) {
        AgentOptions options = AgentOptions.parse(args);
        options.applyTo(System.getProperties());
        exportInternals(inst);
        // Found now, with file:line:reason, rather than at the first selector the application opens.
        ConfigLoader.load();
        installProvider();
        // java.net's Socket and ServerSocket (and HttpURLConnection) under the same rules as NIO channels.
        if (JavaNetRouting.install((RdmaSelectorProvider) SelectorProvider.provider())) {
            // An application that sets its own java.net factory afterwards gets it (rdmanio's steps aside).
            JavaNetRouting.handover(FactoryHandover.install(inst));
        }
        // NIO.2's asynchronous channels too.
        RdmaAsynchronousChannelProvider.install((RdmaSelectorProvider) SelectorProvider.provider());
        // Programs whose Netty picks a native transport never reach the provider: say so when one loads.
        inst.addTransformer(new NativeTransportWatch());
    }

    /**
     * Exports {@code sun.nio.ch} of {@code java.base} to this class's module, the unnamed module of the class path
     * (the agent jar is on the system class path), which is where the provider and the application live too:
     * the provider reaches the JDK's own {@code DefaultSelectorProvider} and the disni fabric the JDK's direct
     * buffer internals through it.
     */
    static void exportInternals(Instrumentation inst) {
        Module base = Object.class.getModule();
        Module self = RdmanioAgent.class.getModule();
        if (base.isExported("sun.nio.ch", self) && base.isExported("jdk.internal.access", self)
                && base.isOpen("java.net", self)) {
            return;
        }
        if (!inst.isModifiableModule(base)) {
            throw new AgentException("the JVM does not let an agent open java.base: run with "
                    + "--add-exports java.base/sun.nio.ch=ALL-UNNAMED");
        }
        // jdk.internal.access: the exit hook that runs after the application's own (JdkAccess).
        // java.net opened: the sockets the rules leave on TCP are handed to the JDK's own SocketImpl, whose
        // methods are protected (JdkSocketImpls).
        inst.redefineModule(base, Set.of(), Map.of("sun.nio.ch", Set.of(self), "jdk.internal.access", Set.of(self)),
            Map.of("java.net", Set.of(self)), Set.of(), Map.of());
        // Class loaders made later by a fabric (DiSNI's) get the same export through this hook.
        JdkAccess.exporter(m -> inst.redefineModule(base, Set.of(), Map.of("sun.nio.ch", Set.of(m)), Map.of(),
            Set.of(), Map.of()));
    }

    /** Sets the provider property and checks the JDK took it: someone may have asked for the provider earlier. */
    private static void installProvider() {
        String wanted = RdmaSelectorProvider.class.getName();
        String given = System.getProperty(PROVIDER_PROPERTY);
        if (given != null && !given.equals(wanted)) {
            throw new AgentException("-D" + PROVIDER_PROPERTY + "=" + given
                    + " names another provider; the rdmanio agent installs " + wanted);
        }
        System.setProperty(PROVIDER_PROPERTY, wanted);
        SelectorProvider installed = SelectorProvider.provider();
        if (!(installed instanceof RdmaSelectorProvider)) {
            throw new AgentException("the JVM's SelectorProvider was chosen before the rdmanio agent ran ("
                    + installed.getClass().getName() + "): is another agent opening channels first?");
        }
    }
}
