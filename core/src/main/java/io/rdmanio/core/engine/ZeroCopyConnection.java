package io.rdmanio.core.engine;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;

/**
 * Opt-in zero-copy reads for code that knows about rdmanio: received bytes are lent in place, over the registered
 * receive slot they arrived in, as reference-counted Netty buffers. Releasing a buffer (Netty's
 * {@code release()}, from any thread) returns its slot to the receive ring, which is what gives the peer its send
 * credit back: a buffer kept is a slot of the window kept. Netty's leak detector reports buffers never released.
 *
 * <p>Every {@link Connection} of the engines in this package implements this interface. Zero-copy and copying
 * reads may be mixed; they take bytes from the same stream in order. One reader at a time, as for
 * {@link Connection#read}.
 */
public interface ZeroCopyConnection extends Connection {

    /** Returned by {@link #readBuffer()} once the peer's FIN has been read (or input was shut down). */
    ByteBuf END_OF_STREAM = Unpooled.EMPTY_BUFFER;

    /**
     * Lends the next received bytes: the rest of the oldest received frame, up to one slot's payload.
     *
     * @return a buffer with reference count 1 that the caller must release; {@code null} if no bytes are
     *         available now; {@link #END_OF_STREAM} after the peer's FIN
     * @throws IOException if the connection failed (sticky, as {@link Connection#read})
     */
    ByteBuf readBuffer() throws IOException;
}
