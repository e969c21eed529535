package io.rdmanio.core.fabric;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;

/**
 * Finds fabric implementations through {@link ServiceLoader} and opens them by name.
 *
 * <p>Thread-safe. Providers are looked up on every call (this is never on the data path), through the class
 * loader that loaded this class, so the agent and the application see the same set.
 */
public final class Fabrics {

    private static final InetAddress LOOPBACK4 = loopback(new byte[] {127, 0, 0, 1});
    private static final InetAddress LOOPBACK6 = loopback(new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});

    private Fabrics() {
    }

    private static InetAddress loopback(byte[] address) {
        try {
            return InetAddress.getByAddress("localhost", address);
        } catch (java.net.UnknownHostException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * For a fabric whose peers are on this host (shm, loopback): the address a connection to {@code remote} is
     * made from when no source was bound, as Linux picks it for a local destination: the loopback address of the
     * remote's family for a loopback or wildcard remote ({@code ::1} for {@code ::1}), else the remote's own
     * address (a host's address reached from the host itself).
     */
    public static InetAddress localSourceFor(InetAddress remote) {
        if (remote.isLoopbackAddress() || remote.isAnyLocalAddress()) {
            return remote instanceof Inet6Address ? LOOPBACK6 : LOOPBACK4;
        }
        return remote;
    }

    /**
     * The provider named {@code name}.
     *
     * @throws IOException naming the known fabrics when no provider has that name
     */
    public static FabricProvider provider(String name) throws IOException {
        Objects.requireNonNull(name, "name");
        for (FabricProvider provider : load()) {
            if (provider.name().equals(name)) {
                return provider;
            }
        }
        throw new IOException("unknown fabric '" + name + "'; known fabrics: " + String.join(", ", names()));
    }

    /** The names of every fabric found, available or not, in lookup order. */
    public static List<String> names() {
        List<String> names = new ArrayList<>();
        for (FabricProvider provider : load()) {
            if (!names.contains(provider.name())) {
                names.add(provider.name());
            }
        }
        return names;
    }

    /**
     * Opens the fabric named {@code name}.
     *
     * @param settings settings without the {@code rdmanio.} prefix, passed to the provider
     * @throws IOException if the name is unknown, or the fabric cannot be opened here (the message carries the
     *                     provider's {@link FabricProvider#unavailableReason(Map)})
     */
    public static Fabric open(String name, Map<String, String> settings) throws IOException {
        FabricProvider provider = provider(name);
        Map<String, String> s = settings == null ? Map.of() : settings;
        String reason = provider.unavailableReason(s);
        if (reason != null) {
            throw new IOException("fabric '" + name + "' is unavailable: " + reason);
        }
        return provider.open(s);
    }

    private static List<FabricProvider> load() {
        List<FabricProvider> providers = new ArrayList<>();
        for (FabricProvider provider : ServiceLoader.load(FabricProvider.class, Fabrics.class.getClassLoader())) {
            providers.add(provider);
        }
        return providers;
    }
}
