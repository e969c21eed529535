package io.rdmanio.selector.config;

import io.rdmanio.core.engine.EngineConfig;
import io.rdmanio.core.resolver.ResolverSettings;
import io.rdmanio.core.resolver.StaticFileBackend;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Reads the provider's configuration from system properties:
 * <ul>
 *   <li>{@code rdmanio.rules}: the rules file; unset means no rules, so every socket stays on the JDK's TCP;</li>
 *   <li>{@code rdmanio.fabric}: {@code auto} (the default), {@code disni}, {@code shm} or {@code loopback};</li>
 *   <li>{@code rdmanio.stats}: a file for the JSON run summary written at JVM exit; unset means none;</li>
 *   <li>the engine's tunables ({@code rdmanio.slotSize}, {@code rdmanio.ringDepth}, {@code rdmanio.controlSlots},
 *       {@code rdmanio.spinMicros}): checked here, read by the engine when it opens;</li>
 *   <li>the resolver's ({@code rdmanio.resolver.*}, see {@link ResolverSettings}): checked here, read by the
 *       resolver when it starts (the first {@code auto} connect or fabric bind).</li>
 * </ul>
 *
 * <p>Every error is found here, at start, and thrown as a {@link ConfigException} whose message names the
 * property or the file, the line and the reason, so a misconfigured program stops instead of quietly running on
 * TCP. Thread-safe.
 */
public final class ConfigLoader {

    public static final String RULES = "rdmanio.rules";
    public static final String FABRIC = "rdmanio.fabric";
    public static final String STATS = "rdmanio.stats";
    /** Runs the resolver (answering queries for this process's fabric listeners) even without an auto rule. */
    public static final String RESOLVER_ENABLED = "rdmanio.resolver.enabled";
    public static final String SLOT_SIZE = "rdmanio.slotSize";
    public static final String RING_DEPTH = "rdmanio.ringDepth";
    public static final String CONTROL_SLOTS = "rdmanio.controlSlots";
    public static final String SPIN_MICROS = "rdmanio.spinMicros";
    public static final String LINGER_MILLIS = "rdmanio.lingerMillis";
    public static final String LINGER_MAX_BYTES = "rdmanio.lingerMaxBytes";

    private static final AtomicBoolean STATS_HOOK_REGISTERED = new AtomicBoolean();
    private static final AtomicBoolean UNKNOWN_WARNED = new AtomicBoolean();
    /** The configuration whose stats file the exit hook writes: the last one loaded with a stats file. */
    private static volatile RdmanioConfig statsConfig;

    private ConfigLoader() {
    }

    /**
     * Loads the configuration from the system properties and, when {@code rdmanio.stats} is set, makes sure the
     * summary is written at exit (one hook per process, however many providers load).
     *
     * @throws ConfigException naming the file, line and reason, or the property and its valid values; the message
     *         is also printed on stderr, prefixed with {@code rdmanio: }
     */
    public static RdmanioConfig load() {
        RdmanioConfig config;
        try {
            config = load(System::getProperty, SystemFabrics.INSTANCE);
        } catch (ConfigException e) {
            // The JDK wraps a provider's failure in a ServiceConfigurationError without a message, so the cause
            // would be deep in a stack trace; one plain line on stderr says what to fix.
            System.err.println("rdmanio: " + e.getMessage());
            throw e;
        }
        warnUnknownProperties();
        String unusable = unusableFabric(config, SystemFabrics.INSTANCE);
        if (unusable != null) {
            System.err.println("rdmanio: " + unusable);
        }
        if (config.statsFile() != null) {
            writeStatsAtExit(config);
        }
        TransportStats.configure(config);
        return config;
    }

    /**
     * Says once per process, on stderr, which {@code rdmanio.*} properties rdmanio does not know: a misspelled
     * setting is a mistake the user must see, but not one worth stopping the program for.
     */
    private static void warnUnknownProperties() {
        if (!UNKNOWN_WARNED.compareAndSet(false, true)) {
            return;
        }
        for (String line : KnownProperties.warnings(System.getProperties().stringPropertyNames())) {
            System.err.println("rdmanio: " + line);
        }
        for (String bad : Debug.unknown(System.getProperty(Debug.PROPERTY))) {
            System.err.println("rdmanio: -D" + Debug.PROPERTY + ": unknown category '" + bad + "' is ignored (expected "
                    + String.join(" or ", Debug.CATEGORIES) + ")");
        }
    }

    /**
     * A warning for a named fabric that cannot open on this machine while the rules route connections to it, with
     * the fix; {@code null} when there is nothing to say. Not an error that stops the program: connections under
     * {@code both} rules still reach their peers over TCP, and a program may route nothing it uses. The check is
     * the cheap part of the fabric's own (for disni: is there an RDMA device, may memory be locked; libdisni is
     * not loaded before the first routed socket).
     */
    static String unusableFabric(RdmanioConfig config, FabricDirectory fabrics) {
        String fabric = config.fabric();
        if (fabric.equals(FabricChoice.AUTO) || ResolvingRouter.rulesOf(config.router()) == null
                || ResolvingRouter.rulesOf(config.router()) == Rules.NONE) {
            return null;
        }
        String reason = fabrics.quickUnavailableReason(fabric);
        if (reason == null) {
            return null;
        }
        return "-D" + FABRIC + "=" + fabric + " cannot open on this machine: " + reason + ". Connections the rules"
                + " route to it will fail (those under 'both' rules go over TCP). "
                + (fabric.equals(FabricChoice.DISNI)
                    ? "For peers on this host use -D" + FABRIC + "=shm (or auto); to run over real verbs without RDMA"
                        + " hardware, use soft-RoCE (`./rdmanio vm -- COMMAND` runs a command where it is set up)."
                    : "Use -D" + FABRIC + "=auto, or fix the cause; `./rdmanio doctor` checks the configuration.");
    }

    /** As {@link #load()}, from {@code properties}, without an exit hook. */
    static RdmanioConfig load(Function<String, String> properties, FabricDirectory fabrics) {
        String fabric = properties.apply(FABRIC);
        if (fabric == null) {
            fabric = FabricChoice.AUTO;
        }
        if (!FabricChoice.accepts(fabric)) {
            throw new ConfigException("-D" + FABRIC + "=" + fabric + " is not a fabric: expected one of "
                    + String.join(", ", FabricChoice.names()));
        }
        Router router = Rules.NONE;
        String rules = properties.apply(RULES);
        AutoRouting auto = AutoRouting.system(fabric, fabrics);
        // The resolver sends UDP broadcasts; it runs only where the configuration asks for it: an auto rule, or
        // rdmanio.resolver.enabled=true (a server that answers for clients whose rules use auto).
        boolean resolving = "true".equals(properties.apply(RESOLVER_ENABLED));
        if (rules != null) {
            Rules loaded = Rules.load(path(RULES, rules));
            router = loaded.hasAutoConnectRule() ? new ResolvingRouter(loaded, auto) : loaded;
            resolving |= loaded.hasAutoRule();
        }
        ensureEngineSettings(properties);
        FallbackSetting.parse(properties.apply(FallbackSetting.PROPERTY));
        ensureResolverSettings(properties);
        Path stats = null;
        String statsName = properties.apply(STATS);
        if (statsName != null) {
            stats = path(STATS, statsName);
            ensureWritableDirectory(stats);
        }
        return new RdmanioConfig(router, new FabricChoice(fabric, fabrics, resolving ? auto : null), fabric, stats);
    }

    /** Checks the resolver's settings and its static file now, so a mistake stops the program at start. */
    private static void ensureResolverSettings(Function<String, String> properties) {
        ResolverSettings settings;
        try {
            settings = ResolverSettings.load(properties);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("-D" + e.getMessage());
        }
        if (settings.file() != null) {
            try {
                new StaticFileBackend(settings.file());
            } catch (IOException e) {
                throw new ConfigException(e.getMessage() + " (" + ResolverSettings.FILE + ")");
            }
        }
    }

    /**
     * Checks the engine's tunables now, each by itself so the error names the property; the engine reads them
     * again when it first opens, which may be long after start.
     *
     * @return the tunables as set, the defaults for the others (the slot size unset stays at the engine's default,
     *         which a fabric's preference replaces when it opens)
     */
    static EngineConfig ensureEngineSettings(Function<String, String> properties) {
        EngineConfig config = EngineConfig.DEFAULT;
        config = withSetting(properties, SLOT_SIZE, config, (c, n) -> c.withSlotSize(intSetting(n)));
        config = withSetting(properties, RING_DEPTH, config, (c, n) -> c.withRingDepth(intSetting(n)));
        config = withSetting(properties, CONTROL_SLOTS, config, (c, n) -> c.withControlSlots(intSetting(n)));
        config = withSetting(properties, SPIN_MICROS, config, (c, n) -> c.withSpinMicros(intSetting(n)));
        config = withSetting(properties, LINGER_MILLIS, config, EngineConfig::withLingerMillis);
        return withSetting(properties, LINGER_MAX_BYTES, config, EngineConfig::withLingerMaxBytes);
    }

    private static int intSetting(long n) {
        if (n != (int) n) {
            throw new IllegalArgumentException("out of range");
        }
        return (int) n;
    }

    private static EngineConfig withSetting(Function<String, String> properties, String property, EngineConfig config,
                                            BiFunction<EngineConfig, Long, EngineConfig> with) {
        String value = properties.apply(property);
        if (value == null || value.isBlank()) {
            return config;
        }
        long number;
        try {
            number = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new ConfigException("-D" + property + "=" + value + " is not a whole number");
        }
        try {
            return with.apply(config, number);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("-D" + property + "=" + value + ": " + e.getMessage());
        }
    }

    private static Path path(String property, String value) {
        if (value.isBlank()) {
            throw new ConfigException("-D" + property + " is empty: expected a file name");
        }
        try {
            return Path.of(value);
        } catch (InvalidPathException e) {
            throw new ConfigException("-D" + property + "=" + value + " is not a file name: " + e.getReason());
        }
    }

    /** Fails now rather than at exit, when nobody is left to see the error. */
    private static void ensureWritableDirectory(Path stats) {
        Path directory = stats.toAbsolutePath().getParent();
        if (Files.isDirectory(stats)) {
            throw new ConfigException("stats file " + stats + " (" + STATS + ") is a directory");
        }
        if (!Files.isDirectory(directory)) {
            throw new ConfigException("stats file " + stats + " (" + STATS + "): directory " + directory
                    + " does not exist");
        }
        if (!Files.isWritable(directory)) {
            throw new ConfigException("stats file " + stats + " (" + STATS + "): directory " + directory
                    + " is not writable");
        }
    }

    private static void writeStatsAtExit(RdmanioConfig config) {
        statsConfig = config;
        if (STATS_HOOK_REGISTERED.compareAndSet(false, true)) {
            Runtime.getRuntime().addShutdownHook(new Thread(ConfigLoader::writeStats, "rdmanio-stats"));
        }
    }

    private static void writeStats() {
        RdmanioConfig config = statsConfig;
        Rules routerRules = ResolvingRouter.rulesOf(config.router());
        String rules = routerRules == null || routerRules == Rules.NONE ? null : routerRules.file();
        try {
            StatsFile.write(config.statsFile(), config.fabric(), rules);
        } catch (IOException | RuntimeException e) {
            // At exit there is no caller left to throw to; stderr is where the user looks.
            System.err.println("rdmanio: cannot write the stats file " + config.statsFile() + ": " + e);
        }
    }
}
