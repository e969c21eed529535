package io.rdmanio.examples.agent;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32;

/**
 * A reader that reads late: accepts one connection on 127.0.0.1, then reads nothing until the file {@code args[0]}
 * exists (made once the writer has exited), then prints its first read's size and the whole stream's length and
 * CRC up to end-of-stream. On TCP the writer's bytes wait in the kernel's buffers meanwhile, so the writer exits at
 * once and the first read takes them all.
 */
public final class SlowReaderMain {

    private SlowReaderMain() {
    }

    static byte[] pattern(int n) {
        byte[] b = new byte[n];
        int x = 17;
        for (int i = 0; i < n; i++) {
            x = x * 1103515245 + 12345;
            b[i] = (byte) (x >>> 16);
        }
        return b;
    }

    public static void main(String[] args) throws Exception {
        Path go = Path.of(args[0]);
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            System.out.println("listening " + ((InetSocketAddress) server.getLocalAddress()).getPort());
            System.out.flush();
            try (SocketChannel c = server.accept()) {
                long deadline = System.nanoTime() + 120_000_000_000L;
                while (!Files.exists(go)) {
                    if (System.nanoTime() - deadline > 0) {
                        System.out.println("FAILED: no go file");
                        return;
                    }
                    Thread.sleep(20);
                }
                ByteBuffer in = ByteBuffer.allocate(args.length > 1 ? Integer.parseInt(args[1]) : 1 << 20);
                int first = c.read(in);
                System.out.println("first read " + first);
                long total = Math.max(first, 0);
                while (first >= 0 && c.read(in) >= 0) {
                    total = in.position();
                }
                CRC32 crc = new CRC32();
                crc.update(in.array(), 0, in.position());
                System.out.println("total " + total + " crc " + Long.toHexString(crc.getValue()) + " then end of stream");
            }
        }
    }
}
