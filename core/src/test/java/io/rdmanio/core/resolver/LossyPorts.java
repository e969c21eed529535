package io.rdmanio.core.resolver;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.SocketAddress;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/** Opens system UDP sockets that drop each sent and each received datagram with a fixed probability. */
final class LossyPorts implements DatagramPort.Factory {

    final AtomicLong dropped = new AtomicLong();
    private final double loss;
    private final Random random;

    LossyPorts(double loss, long seed) {
        this.loss = loss;
        this.random = new Random(seed);
    }

    private boolean drop() {
        synchronized (random) {
            if (random.nextDouble() < loss) {
                dropped.incrementAndGet();
                return true;
            }
            return false;
        }
    }

    @Override
    public DatagramPort open(int port, boolean shared) throws IOException {
        DatagramPort inner = DatagramPort.SYSTEM.open(port, shared);
        return new DatagramPort() {
            @Override
            public void send(DatagramPacket p) throws IOException {
                if (!drop()) {
                    inner.send(p);
                }
            }

            @Override
            public void receive(DatagramPacket p) throws IOException {
                int capacity = p.getLength();
                while (true) {
                    p.setLength(capacity);
                    inner.receive(p);
                    if (!drop()) {
                        return;
                    }
                }
            }

            @Override
            public void join(java.net.InetAddress group, String nic) throws IOException {
                inner.join(group, nic);
            }

            @Override
            public SocketAddress localAddress() {
                return inner.localAddress();
            }

            @Override
            public void close() throws IOException {
                inner.close();
            }
        };
    }
}
