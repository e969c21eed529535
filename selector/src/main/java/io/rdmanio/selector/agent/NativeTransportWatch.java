package io.rdmanio.selector.agent;

import io.rdmanio.selector.config.BypassedTransports;
import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;

/**
 * Watches class loading for the event loops of native transports that bypass the SelectorProvider
 * ({@link BypassedTransports}). It never changes a class (always returns {@code null}); per class loaded it costs one
 * check of the name.
 */
final class NativeTransportWatch implements ClassFileTransformer {

    @Override
    public byte[] transform(ClassLoader loader, String className, Class<?> classBeingRedefined,
                            ProtectionDomain protectionDomain, byte[] classfileBuffer) {
        String kind = BypassedTransports.kindOf(className);
        if (kind != null) {
            BypassedTransports.seen(kind, className);
        }
        return null;
    }
}
