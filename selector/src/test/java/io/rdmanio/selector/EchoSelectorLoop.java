package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * A plain selector loop of the interrupt tests: accepts on {@code server}, echoes what each client sends (small
 * messages, written back at once), closes each client at its end of stream and counts it in {@code served}, until
 * {@code keepGoing} says stop. It runs on the calling thread with whatever interrupt status that thread carries.
 */
public final class EchoSelectorLoop {

    private EchoSelectorLoop() {
    }

    /**
     * Serves until {@code keepGoing} is false (it may throw to end the loop with a failure); closes every accepted
     * channel on the way out.
     *
     * @return whether the calling thread still carries its interrupt status
     */
    public static boolean serve(Selector sel, ServerSocketChannel server, AtomicInteger served, int bufferSize,
                                BooleanSupplier keepGoing) throws IOException {
        List<SocketChannel> open = new ArrayList<>();
        ByteBuffer b = ByteBuffer.allocate(bufferSize);
        try {
            while (keepGoing.getAsBoolean()) {
                sel.select();
                for (Iterator<SelectionKey> it = sel.selectedKeys().iterator(); it.hasNext(); ) {
                    SelectionKey k = it.next();
                    it.remove();
                    if (!k.isValid()) {
                        continue;
                    }
                    if (k.isAcceptable()) {
                        SocketChannel a;
                        while ((a = server.accept()) != null) {
                            open.add(a);
                            a.configureBlocking(false);
                            a.register(sel, SelectionKey.OP_READ);
                        }
                    } else if (k.isReadable()) {
                        SocketChannel a = (SocketChannel) k.channel();
                        int n = a.read(b.clear());
                        if (n > 0) {
                            b.flip();
                            assertEquals(n, a.write(b), "a small echo is written at once");
                        } else if (n < 0) {
                            served.incrementAndGet();
                            a.close();
                        }
                    }
                }
            }
            return Thread.currentThread().isInterrupted();
        } finally {
            for (SocketChannel a : open) {
                a.close();
            }
        }
    }
}
