package io.rdmanio.core.fabric.disni;

import io.rdmanio.core.fabric.Fabric;
import java.net.InetAddress;

/** The DiSNI-facing fabric behind {@link DisniFabric}: the SPI plus what only this fabric can tell. */
public interface DisniVerbs extends Fabric {

    /** The address of the RDMA device's interface: listeners on the wildcard bind here. */
    InetAddress deviceAddress();

    /** The largest inline payload the device accepted for a queue pair (probed when the fabric opened). */
    int maxInlineData();

    /** Work requests that failed with RNR_RETRY_EXC_ERR: sends that found no receive posted. */
    long receiverNotReadyCount();

    /** Whether completion queues offer a {@link io.rdmanio.core.fabric.CompletionQueue#wakeupChannel()}. */
    boolean hasWakeupChannel();

    /** Times the fabric's completion thread left its park to wait on the device for notifiers or setup. */
    long completionThreadWakeups();
}
