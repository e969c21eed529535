package io.rdmanio.examples.agent;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * A writer that exits: connects to {@code host:port}, writes {@code pieces} writes of 10 bytes (or {@code size})
 * ({@link SlowReaderMain#pattern}), prints what it wrote and exits without closing (as a program whose last act is a write),
 * or closes first ({@code close}).
 */
public final class SmallWritesThenExitMain {

    private SmallWritesThenExitMain() {
    }

    public static void main(String[] args) throws Exception {
        int pieces = Integer.parseInt(args[2]);
        int size = args.length > 4 ? Integer.parseInt(args[4]) : 10;
        byte[] data = SlowReaderMain.pattern(pieces * size);
        SocketChannel c = SocketChannel.open(new InetSocketAddress(args[0], Integer.parseInt(args[1])));
        for (int off = 0; off < data.length; off += size) {
            ByteBuffer piece = ByteBuffer.wrap(data, off, size);
            while (piece.hasRemaining()) {
                c.write(piece);
            }
        }
        System.out.println("wrote " + data.length);
        System.out.flush();
        if (args.length > 3 && args[3].equals("close")) {
            c.close();
        }
        System.exit(0);
    }
}
