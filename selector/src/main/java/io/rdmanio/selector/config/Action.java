package io.rdmanio.selector.config;

/** What a routing rule does with a matching socket. */
public enum Action {
    /** Carried by a fabric; if none can carry it, the operation fails with an IOException saying why. */
    RDMA,
    /** The JDK's own TCP, untouched. */
    TCP,
    /** A server listens on the fabric and on TCP; a client tries the fabric and falls back to TCP in bounded time. */
    BOTH,
    /** Ask the resolver whether the peer serves this address over a fabric. */
    AUTO
}
