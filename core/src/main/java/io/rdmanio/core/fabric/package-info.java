/**
 * The fabric SPI: a small model of RDMA verbs that every transport below the connection engine implements.
 *
 * <p>The shape follows rdma-core's verbs and connection manager so the engine above is the same for real RDMA
 * (the disni fabric) and for the software fabrics (loopback, shm):
 * <ul>
 *   <li>{@link io.rdmanio.core.fabric.CmId} and {@link io.rdmanio.core.fabric.EventChannel}: reliable connected
 *       endpoints set up by connection-manager events that may carry a small private-data payload;</li>
 *   <li>{@link io.rdmanio.core.fabric.MemoryRegion}: memory registered once, with local and remote keys;</li>
 *   <li>{@link io.rdmanio.core.fabric.QueuePair}: receives posted ahead of time and sends that land in them, from
 *       registered memory (small sends also inline, gathered from ordinary buffers); no RDMA write or read;</li>
 *   <li>{@link io.rdmanio.core.fabric.CompletionQueue}: completions, polled or armed and waited on.</li>
 * </ul>
 *
 * <p>Strictness is part of the contract. A send that arrives where no receive is posted, a send larger than the
 * receive it lands in, and any access outside a registered region or with the wrong key are fatal errors of the
 * queue pair, reported through error completions, exactly as hardware without receiver-not-ready retry does.
 * The software fabrics enforce this, so that a flow-control bug fails a test instead of hiding.
 *
 * <p>Nothing in this package knows about java.nio channels.
 */
package io.rdmanio.core.fabric;
