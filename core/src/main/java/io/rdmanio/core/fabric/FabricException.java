package io.rdmanio.core.fabric;

import java.io.IOException;

/** A verbs-level failure: an operation on a queue pair, a region or a completion queue that cannot be done. */
public class FabricException extends IOException {
    private static final long serialVersionUID = 1L;

    public FabricException(String message) {
        super(message);
    }

    public FabricException(String message, Throwable cause) {
        super(message, cause);
    }
}
