package io.rdmanio.core.fabric.disni;

import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.Fabric;
import io.rdmanio.core.fabric.MemoryRegion;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;

/**
 * The disni fabric: reliable connections over RDMA verbs through DiSNI 2.1, with the loopback fabric's semantics
 * on a real device.
 *
 * <h2>How the SPI maps onto verbs</h2>
 * <ul>
 *   <li><b>One device, one protection domain.</b> The fabric opens the device that owns its address, allocates
 *       one protection domain and registers every region in it with exactly the access asked for.</li>
 *   <li><b>Completion queues.</b> Every queue pair reports to one device completion queue with a completion
 *       channel; each SPI completion queue is a ring fed from it. A work request's id on the wire names its queue
 *       pair, direction and position, so completions (error and flush completions too) go to the right ring and
 *       free the right number of send slots. Arming a queue arms the device queue, and every poll first consumes the
 *       completion channel's event (non-blocking) and re-arms while a queue is still armed.</li>
 *   <li><b>Waiting.</b> The completion channel is offered as a JDK channel ({@link CompletionQueue#wakeupChannel()}):
 *       a selector that registers it is woken by the device's event itself, and arms its queues as watched. The
 *       fabric's completion thread waits on the channel only while a queue is armed without a watcher (a thread
 *       blocked in a channel operation) or a connection is being set up; otherwise it is parked. An armed queue's
 *       notifier still runs when another thread's poll takes its completion (and the event) first.</li>
 *   <li><b>Connection setup.</b> DiSNI 2.1 lets Java send connect private data but never read any, and has no
 *       reject. So the private data travels in-band: the active side's queue pair holds one fabric receive
 *       before any of the engine's, and once rdma_cm connects it sends a setup message with the connect's private
 *       data; the passive side accepts at the rdma_cm level into a queue pair of {@code disni.maxWr} depth with
 *       one fabric receive, and delivers CONNECT_REQUEST when the message arrives. The SPI accept or reject goes
 *       back as a verdict message (carrying the private data) ahead of anything the engine sends; a reject then
 *       disconnects. The engine sees the same events, in the same order, as on the loopback fabric.</li>
 *   <li><b>Posting.</b> Each queue pair builds DiSNI's stateful post-send, post-write and post-receive calls once
 *       and rewrites their fields in place for every post, so posting allocates nothing.</li>
 *   <li><b>Errors.</b> An error completion puts the queue pair in the error state and disconnects it; the peer and
 *       every outstanding request are flushed by the device, and both ids get DISCONNECTED. Completion statuses
 *       are ibv_wc_status values, one to one.</li>
 *   <li><b>Addresses.</b> Ids bind to the device's address; a wildcard bind means that address (DiSNI takes a new
 *       connection's device from the listening id, which has none on the wildcard).</li>
 * </ul>
 *
 * <p>Thread-safe, as the SPI requires. The fabric runs two threads of its own: one reads connection-manager events
 * (blocked in the kernel), one waits for completions for queues armed without a watcher and for connection setup
 * (parked otherwise).
 */
public final class DisniFabric implements Fabric {

    private final DisniVerbs verbs;

    DisniFabric(DisniVerbs verbs) {
        this.verbs = verbs;
    }

    @Override
    public String name() {
        return DisniFabricProvider.NAME;
    }

    /** The local address of the RDMA interface this fabric uses. */
    public InetAddress deviceAddress() {
        return verbs.deviceAddress();
    }

    /** The largest inline payload the device accepts. */
    public int maxInlineData() {
        return verbs.maxInlineData();
    }

    /** Sends and writes that failed because no receive was posted at the peer (RNR_RETRY_EXC_ERR). */
    public long receiverNotReadyCount() {
        return verbs.receiverNotReadyCount();
    }

    /**
     * Whether a blocked select can wait on the completion channel itself (each completion queue's
     * {@link CompletionQueue#wakeupChannel()}); {@code false} when libdisni lacks rdmanio's natives or
     * {@code sun.nio.ch} is not exported to the fabric, and every wakeup goes through the completion thread.
     */
    public boolean hasWakeupChannel() {
        return verbs.hasWakeupChannel();
    }

    /**
     * Times the completion thread left its park to wait on the device: for relayed notifications (queues armed
     * without a watcher of the wakeup channel) and connection setup. A select that watches the wakeup channel
     * never adds to it.
     */
    public long completionThreadWakeups() {
        return verbs.completionThreadWakeups();
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, int access) throws IOException {
        return verbs.register(buffer, access);
    }

    @Override
    public MemoryRegion allocate(int length, int access) throws IOException {
        return verbs.allocate(length, access);
    }

    @Override
    public CompletionQueue createCompletionQueue(int entries) throws IOException {
        return verbs.createCompletionQueue(entries);
    }

    @Override
    public EventChannel createEventChannel() throws IOException {
        return verbs.createEventChannel();
    }

    @Override
    public CmId createId(EventChannel events) throws IOException {
        return verbs.createId(events);
    }

    @Override
    public void close() throws IOException {
        verbs.close();
    }

    @Override
    public String toString() {
        return "disni fabric on " + verbs.deviceAddress().getHostAddress();
    }
}
