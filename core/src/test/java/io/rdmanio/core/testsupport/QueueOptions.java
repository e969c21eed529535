package io.rdmanio.core.testsupport;

import io.rdmanio.core.fabric.MemoryRegion;

/**
 * The queue settings of a test link between two fabric instances (the fabric conformance suite's, the loopback
 * fabric's own tests'): queue depths, completion-queue size, inline size, region access, and the receives the
 * server posts before it accepts.
 */
public final class QueueOptions {
    public int sendWr = 16;
    public int recvWr = 16;
    public int inline = 64;
    public int cqEntries = 256;
    public int access = MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_WRITE;
    public int serverReceives;
    public int serverReceiveSize = 1024;

    public QueueOptions sendWr(int n) {
        sendWr = n;
        return this;
    }

    public QueueOptions recvWr(int n) {
        recvWr = n;
        return this;
    }

    public QueueOptions cqEntries(int n) {
        cqEntries = n;
        return this;
    }

    public QueueOptions access(int a) {
        access = a;
        return this;
    }

    /** {@code n} receives of {@code size} bytes each, posted by the server before it accepts. */
    public QueueOptions serverReceives(int n, int size) {
        serverReceives = n;
        serverReceiveSize = size;
        return this;
    }
}
