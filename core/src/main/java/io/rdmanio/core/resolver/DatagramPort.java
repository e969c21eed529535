package io.rdmanio.core.resolver;

import java.io.Closeable;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

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
            public void close() {
                s.close();
            }
        };
    };
}
