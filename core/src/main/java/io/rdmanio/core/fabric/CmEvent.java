package io.rdmanio.core.fabric;

import java.nio.ByteBuffer;

/**
 * A connection-manager event. Allocated per connection setup, never on the data path.
 *
 * @param type        what happened
 * @param id          the id the event is about: for {@link Type#CONNECT_REQUEST} a new id for the incoming
 *                    connection, to be accepted or rejected
 * @param listenId    for {@link Type#CONNECT_REQUEST}, the listening id that received it; else {@code null}
 * @param privateData the peer's private data (read-only, possibly empty), for connect requests, rejections and
 *                    establishment
 * @param reason      for failures, a sentence naming the cause; else {@code null}
 */
public record CmEvent(Type type, CmId id, CmId listenId, ByteBuffer privateData, String reason) {

    /**
     * Starts the reason of a {@link Type#DISCONNECTED} event when this side's fabric failed the connection because
     * the peer broke the fabric's own protocol (a corrupt shared ring, a shared file shrunk under it): the engine
     * reports such a failure as a {@link java.net.ProtocolException} naming what was found, not as a reset.
     */
    public static final String PROTOCOL_ERROR = "protocol error: ";

    public enum Type {
        /** A peer asks to connect to a listening id. */
        CONNECT_REQUEST,
        /** The connection is up on both sides; sends may be posted. */
        ESTABLISHED,
        /** The peer (or, with empty private data, the fabric: no listener at that address) refused. */
        REJECTED,
        /** The address could not be resolved or no route leads to it. */
        UNREACHABLE,
        /** The connection is gone: the peer disconnected, died, or the queue pair failed. */
        DISCONNECTED
    }
}
