package io.rdmanio.selector.shm;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
import java.util.Random;
import java.util.zip.CRC32;

/**
 * An ordinary NIO echo client, plain java.nio: {@code PORT CONNECTIONS MAX_BYTES SEED}. Opens every connection
 * at once on one selector, sends each a random number of random bytes (up to MAX_BYTES), reads the echo back,
 * and compares the checksums. Prints {@code OK connections bytes} and exits 0, or names the first mismatch and
 * exits 1.
 */
public final class EchoClientMain {

    private static final class Conn {
        final int index;
        final ByteBuffer out;
        final long sentCrc;
        final CRC32 gotCrc = new CRC32();
        final ByteBuffer in = ByteBuffer.allocate(64 * 1024);
        long received;

        Conn(int index, byte[] data) {
            this.index = index;
            this.out = ByteBuffer.wrap(data);
            CRC32 crc = new CRC32();
            crc.update(data);
            this.sentCrc = crc.getValue();
        }
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int connections = Integer.parseInt(args[1]);
        int maxBytes = Integer.parseInt(args[2]);
        Random random = new Random(Long.parseLong(args[3]));
        Selector selector = Selector.open();
        long total = 0;
        for (int i = 0; i < connections; i++) {
            // Some tiny, most spread up to the maximum.
            int size = i % 10 == 0 ? 1 + random.nextInt(100) : 1 + random.nextInt(maxBytes);
            byte[] data = new byte[size];
            random.nextBytes(data);
            total += size;
            SocketChannel c = SocketChannel.open();
            c.configureBlocking(false);
            c.connect(new InetSocketAddress("127.0.0.1", port));
            c.register(selector, SelectionKey.OP_CONNECT, new Conn(i, data));
        }
        int open = connections;
        long deadline = System.nanoTime() + 150_000_000_000L;
        while (open > 0) {
            if (System.nanoTime() - deadline > 0) {
                System.out.println("FAILED: " + open + " connections not finished in time");
                System.exit(1);
            }
            selector.select(1000);
            Iterator<SelectionKey> it = selector.selectedKeys().iterator();
            while (it.hasNext()) {
                SelectionKey key = it.next();
                it.remove();
                SocketChannel c = (SocketChannel) key.channel();
                Conn conn = (Conn) key.attachment();
                if (key.isConnectable()) {
                    c.finishConnect();
                    key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                    continue;
                }
                if (key.isWritable()) {
                    c.write(conn.out);
                    if (!conn.out.hasRemaining()) {
                        key.interestOps(SelectionKey.OP_READ);
                    }
                }
                if (key.isReadable()) {
                    int n = c.read(conn.in.clear());
                    if (n < 0) {
                        System.out.println("FAILED: connection " + conn.index + " ended after " + conn.received
                            + " of " + conn.out.capacity() + " bytes");
                        System.exit(1);
                    }
                    conn.gotCrc.update(conn.in.array(), 0, n);
                    conn.received += n;
                    if (conn.received > conn.out.capacity()) {
                        System.out.println("FAILED: connection " + conn.index + " got more than it sent");
                        System.exit(1);
                    }
                    if (conn.received == conn.out.capacity()) {
                        if (conn.gotCrc.getValue() != conn.sentCrc) {
                            System.out.println("FAILED: connection " + conn.index + " echo differs (crc)");
                            System.exit(1);
                        }
                        c.close();
                        open--;
                    }
                }
            }
        }
        System.out.println("OK " + connections + " " + total);
        System.out.flush();
        selector.close();
    }
}
