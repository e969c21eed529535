package io.rdmanio.core.fabric.disni.verbs;

import com.ibm.disni.util.MemoryUtils;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.rdmanio.core.fabric.disni.DisniBackend;
import io.rdmanio.core.fabric.disni.DisniVerbs;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.Map;

/** The entry point the fabric's class loader instantiates. Thread-safe (stateless). */
public final class VerbsBackend implements DisniBackend {

    public VerbsBackend() {
    }

    @Override
    public void load() throws Throwable {
        try {
            MemoryUtils.getAddress(ByteBuffer.allocateDirect(1));
        } catch (IllegalAccessError e) {
            throw new IOException("DiSNI needs the JVM flag --add-exports java.base/sun.nio.ch=ALL-UNNAMED", e);
        }
        RdmaEventChannel channel = RdmaEventChannel.createEventChannel();
        channel.destroyEventChannel();
    }

    @Override
    public DisniVerbs open(InetAddress deviceAddress, Map<String, String> settings) throws IOException {
        return VerbsFabric.open(deviceAddress, settings);
    }
}
