package io.rdmanio.core.fabric.disni;

import java.io.IOException;
import java.net.InetAddress;
import java.util.Map;

/**
 * The boundary between the fabric's public classes and its DiSNI-facing implementation, which lives in a class
 * loader of its own (see {@link DisniClassLoader}). Only types of the fabric SPI and of this package cross it.
 *
 * <p>Implementations are thread-safe.
 */
public interface DisniBackend {

    /**
     * Loads libdisni and checks that the connection manager answers (creates and destroys an event channel).
     *
     * @throws Throwable whatever loading threw: {@link UnsatisfiedLinkError}, {@link ExceptionInInitializerError},
     *                   {@link NoClassDefFoundError} or an {@link IOException} from librdmacm
     */
    void load() throws Throwable;

    /** Opens the fabric on the RDMA device that owns {@code deviceAddress}. */
    DisniVerbs open(InetAddress deviceAddress, Map<String, String> settings) throws IOException;
}
