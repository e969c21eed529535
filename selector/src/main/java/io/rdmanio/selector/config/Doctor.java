package io.rdmanio.selector.config;

import java.io.PrintStream;
import java.util.function.Function;

/**
 * {@code ./rdmanio doctor}: checks the configuration in the {@code rdmanio.*} system properties the way the provider
 * would at start, and says which fabrics this machine can open and what {@code auto} would choose.
 *
 * <p>Exits 0 when the configuration loads, 1 when it does not (the message names the file, line and reason).
 */
public final class Doctor {

    private Doctor() {
    }

    public static void main(String[] args) {
        System.exit(run(System::getProperty, SystemFabrics.INSTANCE, System.out));
    }

    static int run(Function<String, String> properties, FabricDirectory fabrics, PrintStream out) {
        out.println("java " + properties.apply("java.version") + " (" + properties.apply("java.home") + ")");
        String disni = null;
        String shm = null;
        for (String name : FabricChoice.NAMES) {
            if (name.equals(FabricChoice.AUTO)) {
                continue;
            }
            String reason = fabrics.unavailableReason(name);
            out.println("fabric " + name + ": " + (reason == null ? "available" : "unavailable: " + reason));
            if (name.equals(FabricChoice.DISNI)) {
                disni = reason;
            } else if (name.equals(FabricChoice.SHM)) {
                shm = reason;
            }
        }
        String auto = disni == null ? "disni"
                : shm == null ? "shm for peers on this host; nothing for other peers"
                : "nothing: a routed connection fails; use -Drdmanio.fabric=loopback for peers in one JVM";
        out.println("rdmanio.fabric=auto would use: " + auto);
        RdmanioConfig config;
        try {
            config = ConfigLoader.load(properties, fabrics);
        } catch (ConfigException e) {
            out.println("configuration: ERROR " + e.getMessage());
            return 1;
        }
        out.println("rdmanio.fabric=" + config.fabric());
        if (config.router() instanceof Rules && config.router() != Rules.NONE) {
            Rules rules = (Rules) config.router();
            out.println("rdmanio.rules=" + rules.file() + ": " + rules.size() + " rules, no errors");
        } else {
            out.println("rdmanio.rules is not set: every connection stays on the JDK's TCP");
        }
        out.println("rdmanio.stats=" + (config.statsFile() == null ? "(not set)" : config.statsFile()));
        return 0;
    }
}
