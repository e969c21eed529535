package io.rdmanio.selector;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.Pipe;
import java.nio.channels.SelectableChannel;
import java.nio.channels.spi.SelectorProvider;

/**
 * A pipe of this provider: both ends are this provider's channels, standing on a pipe of the JDK's own provider.
 * java.nio only lets a selector take channels of its own provider, so an application that registers a pipe next
 * to its sockets (a wakeup pipe, a hand-off between threads) needs the pipe to be rdmanio's; the rdmanio
 * selector registers the JDK pipe ends on its inner JDK selector, where the JDK reports their readiness.
 *
 * <p>Thread-safe as java.nio specifies: reads, writes and blocking-mode changes pass through to the JDK's channel,
 * which does its own locking.
 */
final class RdmaPipe extends Pipe {

    private final Source source;
    private final Sink sink;

    RdmaPipe(SelectorProvider provider, Pipe jdk) {
        this.source = new Source(provider, jdk.source());
        this.sink = new Sink(provider, jdk.sink());
    }

    @Override
    public SourceChannel source() {
        return source;
    }

    @Override
    public SinkChannel sink() {
        return sink;
    }

    /** The read end. */
    static final class Source extends Pipe.SourceChannel implements JdkBackedChannel {

        private final Pipe.SourceChannel jdk;
        private final DelegateKeys keys = new DelegateKeys();

        Source(SelectorProvider provider, Pipe.SourceChannel jdk) {
            super(provider);
            this.jdk = jdk;
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            try {
                return jdk.read(dst);
            } catch (ClosedByInterruptException e) {
                throw closedByInterrupt(this, e);
            }
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            try {
                return jdk.read(dsts, offset, length);
            } catch (ClosedByInterruptException e) {
                throw closedByInterrupt(this, e);
            }
        }

        @Override
        public long read(ByteBuffer[] dsts) throws IOException {
            return read(dsts, 0, dsts.length);
        }

        @Override
        protected void implCloseSelectableChannel() throws IOException {
            jdk.close();
        }

        @Override
        protected void implConfigureBlocking(boolean block) throws IOException {
            keys.configureBlocking(jdk, block);
        }

        // -- JdkBackedChannel

        @Override
        public SelectableChannel delegate() {
            return jdk;
        }

        @Override
        public DelegateKeys delegateKeys() {
            return keys;
        }

        @Override
        public String toString() {
            return "RdmaPipe.Source[" + jdk + "]";
        }
    }

    /** The write end. */
    static final class Sink extends Pipe.SinkChannel implements JdkBackedChannel {

        private final Pipe.SinkChannel jdk;
        private final DelegateKeys keys = new DelegateKeys();

        Sink(SelectorProvider provider, Pipe.SinkChannel jdk) {
            super(provider);
            this.jdk = jdk;
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            try {
                return jdk.write(src);
            } catch (ClosedByInterruptException e) {
                throw closedByInterrupt(this, e);
            }
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            try {
                return jdk.write(srcs, offset, length);
            } catch (ClosedByInterruptException e) {
                throw closedByInterrupt(this, e);
            }
        }

        @Override
        public long write(ByteBuffer[] srcs) throws IOException {
            return write(srcs, 0, srcs.length);
        }

        @Override
        protected void implCloseSelectableChannel() throws IOException {
            jdk.close();
        }

        @Override
        protected void implConfigureBlocking(boolean block) throws IOException {
            keys.configureBlocking(jdk, block);
        }

        // -- JdkBackedChannel

        @Override
        public SelectableChannel delegate() {
            return jdk;
        }

        @Override
        public DelegateKeys delegateKeys() {
            return keys;
        }

        @Override
        public String toString() {
            return "RdmaPipe.Sink[" + jdk + "]";
        }
    }

    /**
     * The JDK channel underneath was closed by an interrupt of a thread blocked in it: java.nio says the channel the
     * application holds is closed then, so close this one too.
     */
    static ClosedByInterruptException closedByInterrupt(java.nio.channels.Channel wrapper, ClosedByInterruptException e) {
        try {
            wrapper.close();
        } catch (IOException suppressed) {
            e.addSuppressed(suppressed);
        }
        return e;
    }
}
