package io.rdmanio.selector;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.MembershipKey;
import java.nio.channels.SelectableChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Set;

/**
 * A datagram channel of this provider, standing on the JDK's own: datagrams are never routed to a fabric (the
 * fabrics carry reliable connections only), but java.nio only lets a selector take channels of its own provider,
 * so an application that registers a datagram channel next to its sockets needs it to be rdmanio's. The rdmanio
 * selector registers the JDK channel on its inner JDK selector, where the JDK reports its readiness.
 *
 * <p>Everything passes through to the JDK channel, which does its own locking. Two objects come from it unwrapped:
 * {@link #socket()} and the {@link MembershipKey}s of {@code join}, whose {@code getChannel()}/{@code channel()}
 * answer the JDK channel. Thread-safe as java.nio specifies.
 */
final class RdmaDatagramChannel extends DatagramChannel implements JdkBackedChannel {

    private final DatagramChannel jdk;
    private final DelegateKeys keys = new DelegateKeys();

    RdmaDatagramChannel(SelectorProvider provider, DatagramChannel jdk) {
        super(provider);
        this.jdk = jdk;
    }

    @Override
    public DatagramChannel bind(SocketAddress local) throws IOException {
        jdk.bind(local);
        return this;
    }

    @Override
    public <T> DatagramChannel setOption(SocketOption<T> name, T value) throws IOException {
        jdk.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return jdk.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return jdk.supportedOptions();
    }

    @Override
    public DatagramSocket socket() {
        return jdk.socket();
    }

    @Override
    public boolean isConnected() {
        return jdk.isConnected();
    }

    @Override
    public DatagramChannel connect(SocketAddress remote) throws IOException {
        try {
            jdk.connect(remote);
        } catch (ClosedByInterruptException e) {
            throw RdmaPipe.closedByInterrupt(this, e);
        }
        return this;
    }

    @Override
    public DatagramChannel disconnect() throws IOException {
        jdk.disconnect();
        return this;
    }

    @Override
    public SocketAddress getRemoteAddress() throws IOException {
        return jdk.getRemoteAddress();
    }

    @Override
    public SocketAddress receive(ByteBuffer dst) throws IOException {
        try {
            return jdk.receive(dst);
        } catch (ClosedByInterruptException e) {
            throw RdmaPipe.closedByInterrupt(this, e);
        }
    }

    @Override
    public int send(ByteBuffer src, SocketAddress target) throws IOException {
        try {
            return jdk.send(src, target);
        } catch (ClosedByInterruptException e) {
            throw RdmaPipe.closedByInterrupt(this, e);
        }
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        try {
            return jdk.read(dst);
        } catch (ClosedByInterruptException e) {
            throw RdmaPipe.closedByInterrupt(this, e);
        }
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        try {
            return jdk.read(dsts, offset, length);
        } catch (ClosedByInterruptException e) {
            throw RdmaPipe.closedByInterrupt(this, e);
        }
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        try {
            return jdk.write(src);
        } catch (ClosedByInterruptException e) {
            throw RdmaPipe.closedByInterrupt(this, e);
        }
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        try {
            return jdk.write(srcs, offset, length);
        } catch (ClosedByInterruptException e) {
            throw RdmaPipe.closedByInterrupt(this, e);
        }
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        return jdk.getLocalAddress();
    }

    @Override
    public MembershipKey join(InetAddress group, NetworkInterface interf) throws IOException {
        return jdk.join(group, interf);
    }

    @Override
    public MembershipKey join(InetAddress group, NetworkInterface interf, InetAddress source) throws IOException {
        return jdk.join(group, interf, source);
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
        return "RdmaDatagramChannel[" + jdk + "]";
    }
}
