package io.rdmanio.benchmarks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;

/**
 * The two ends of {@link FileTransferBench}, each its own process on the transport under test.
 *
 * <pre>
 * FileTransferPeer serve FILE ROUNDS          prints "PORT p", then sends FILE to each of ROUNDS connections with
 *                                             FileChannel.transferTo (what Netty's DefaultFileRegion and Jetty's
 *                                             file content do), on a blocking channel
 * FileTransferPeer fetch PORT ROUNDS BYTES    reads each round to its end with a 1 MiB direct buffer, checks the
 *                                             byte count and prints "ROUND ms" for each
 * </pre>
 */
public final class FileTransferPeer {

    private FileTransferPeer() {
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("serve")) {
            serve(Path.of(args[1]), Integer.parseInt(args[2]));
        } else {
            fetch(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Long.parseLong(args[3]));
        }
    }

    private static void serve(Path file, int rounds) throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            System.out.println("PORT " + ((InetSocketAddress) server.getLocalAddress()).getPort());
            System.out.flush();
            for (int r = 0; r < rounds; r++) {
                try (SocketChannel c = server.accept(); FileChannel f = FileChannel.open(file)) {
                    long size = f.size();
                    for (long at = 0; at < size; ) {
                        at += f.transferTo(at, size - at, c);
                    }
                }
            }
        }
    }

    private static void fetch(int port, int rounds, long bytes) throws IOException {
        ByteBuffer in = ByteBuffer.allocateDirect(1 << 20);
        for (int r = 0; r < rounds; r++) {
            long t0 = System.nanoTime();
            long got = 0;
            try (SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", port))) {
                for (int n; (n = c.read(in.clear())) >= 0; ) {
                    got += n;
                }
            }
            long ns = System.nanoTime() - t0;
            if (got != bytes) {
                throw new IOException("round " + r + ": " + got + " bytes, expected " + bytes);
            }
            System.out.println("ROUND " + ns);
        }
    }
}
