package io.rdmanio.examples.agent;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * A writer that exits: connects to {@code host:port}, writes {@code pieces} writes of 10 bytes ({@link
 * SlowReaderMain#pattern}), prints what it wrote and exits without closing (as a program whose last act is a write),
 * or closes first ({@code close}).
 */
public final class SmallWritesThenExitMain {

    private SmallWritesThenExitMain() {
    }

    public static void main(String[] args) throws Exception {
        int pieces = Integer.parseInt(args[2]);
        byte[] data = SlowReaderMain.pattern(pieces * 10);
        SocketChannel c = SocketChannel.open(new InetSocketAddress(args[0], Integer.parseInt(args[1])));
        for (int off = 0; off < data.length; off += 10) {
            ByteBuffer piece = ByteBuffer.wrap(data, off, 10);
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
