package io.rdmanio.core.resolver;

import java.io.Closeable;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;

/**
 * A UDP socket as the resolver uses it; a seam so tests can lose packets. The real one is a
 * {@link DatagramSocket}, which since JDK 15 runs on the JDK's default provider whatever
 * {@code java.nio.channels.spi.SelectorProvider} says, so the resolver never goes through rdmanio's own channels.
 */
interface DatagramPort extends Closeable {

    void send(DatagramPacket p) throws IOException;

    /** Blocks until a datagram arrives or the port closes. */
    void receive(DatagramPacket p) throws IOException;

    SocketAddress localAddress();

    /** Joins multicast {@code group} on interface {@code nic}, so datagrams sent to it arrive here. */
    void join(InetAddress group, String nic) throws IOException;

    /** Opens UDP sockets: the responder's on the well-known port (shared), a querier's on an ephemeral one. */
    interface Factory {
        DatagramPort open(int port, boolean shared) throws IOException;
    }

    Factory SYSTEM = (port, shared) -> {
        DatagramSocket s = new DatagramSocket(null);
        try {
            // Several JVMs on one host each run a responder on the port; broadcasts reach all of them.
            s.setReuseAddress(shared);
            s.setBroadcast(true);
            // IPv6 queries go to a multicast group; the looped-back copy is what reaches the other processes of
            // this host (on by default in Linux; set so that it does not depend on that).
            s.setOption(StandardSocketOptions.IP_MULTICAST_LOOP, true);
            s.bind(new InetSocketAddress(port));
        } catch (IOException | RuntimeException e) {
            s.close();
            throw new IOException("cannot open the resolver's UDP socket on port " + port + ": " + e.getMessage(), e);
        }
        return new DatagramPort() {
            @Override
            public void send(DatagramPacket p) throws IOException {
                s.send(p);
            }

            @Override
            public void receive(DatagramPacket p) throws IOException {
                s.receive(p);
            }

            @Override
            public SocketAddress localAddress() {
                return s.getLocalSocketAddress();
            }

            @Override
            public void join(InetAddress group, String nic) throws IOException {
                NetworkInterface ni = NetworkInterface.getByName(nic);
                if (ni == null) {
                    throw new IOException("no interface " + nic);
                }
                s.joinGroup(new InetSocketAddress(group, 0), ni);
            }

            @Override
            public void close() {
                s.close();
            }
        };
    };
}
