package io.rdmanio.selector.config;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The provider's configuration: routing, fabric choice and the stats file. Immutable.
 *
 * @param router    routing rules ({@code rdmanio.rules})
 * @param engines   the fabric choice ({@code rdmanio.fabric})
 * @param fabric    the configured fabric name, as given ({@code auto}, {@code disni}, {@code shm}, {@code loopback})
 * @param statsFile where to write the summary at exit, or {@code null}
 */
public record RdmanioConfig(Router router, EngineSource engines, String fabric, Path statsFile) {

    public RdmanioConfig {
        Objects.requireNonNull(router, "router");
        Objects.requireNonNull(engines, "engines");
        Objects.requireNonNull(fabric, "fabric");
    }
}
