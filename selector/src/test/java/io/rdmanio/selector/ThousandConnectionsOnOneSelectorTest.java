package io.rdmanio.selector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.engine.Engines;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/**
 * A thousand fabric connections, both of their ends on ONE selector driven by one thread: every client sends a
 * random amount of data through random-sized heap or direct buffers, the server side echoes it, and each client
 * checks the echo's CRC32 and length. Small SO_RCVBUF/SO_SNDBUF keep the rings (and memory) small, so credit runs
 * out often and OP_WRITE has to come back through the selector.
 */
class ThousandConnectionsOnOneSelectorTest {

    private static final int CONNECTIONS = 1000;
    private static final int BUFFER = 16 * 1024;
    private static final long DEADLINE_SECONDS = 120;

    private final SelectorProvider provider = new RdmaSelectorProvider(TestRouting.fabricFor(
            a -> a.getAddress().isLoopbackAddress(), (peer, listening) -> Engines.get("loopback"), "loopback"));

    /** One end of an echo: the client keeps what it sent and what came back; the server what it must echo. */
    private static final class End {
        final boolean client;
        final ByteBuffer out;
        final ByteBuffer in;
        final CRC32 sentCrc = new CRC32();
        final CRC32 echoCrc = new CRC32();
        final int total;
        long sentBytes;
        long echoed;
        boolean done;

        End(boolean client, int total, boolean direct, int chunk) {
            this.client = client;
            this.total = total;
            this.out = direct ? ByteBuffer.allocateDirect(chunk) : ByteBuffer.allocate(chunk);
            this.in = direct ? ByteBuffer.allocateDirect(chunk) : ByteBuffer.allocate(chunk);
            out.limit(0);
        }
    }

    @Test
    void aThousandEchoConnectionsOnOneSelectorAreByteExact() throws Exception {
        SplittableRandom random = new SplittableRandom(20261121L);
        List<SocketChannel> all = new ArrayList<>();
        try (ServerSocketChannel server = provider.openServerSocketChannel();
             Selector sel = provider.openSelector()) {
            server.setOption(StandardSocketOptions.SO_RCVBUF, BUFFER);
            server.bind(new InetSocketAddress("127.0.0.1", 0), CONNECTIONS);
            server.configureBlocking(false);
            server.register(sel, SelectionKey.OP_ACCEPT);

            SocketChannel[] clients = new SocketChannel[CONNECTIONS];
            End[] ends = new End[CONNECTIONS];
            for (int i = 0; i < CONNECTIONS; i++) {
                SocketChannel c = provider.openSocketChannel();
                all.add(c);
                c.setOption(StandardSocketOptions.SO_RCVBUF, BUFFER);
                c.setOption(StandardSocketOptions.SO_SNDBUF, BUFFER);
                c.configureBlocking(false);
                ends[i] = new End(true, 1 + random.nextInt(64 * 1024), random.nextBoolean(), 1 + random.nextInt(8192));
                clients[i] = c;
                c.register(sel, SelectionKey.OP_CONNECT, ends[i]);
                c.connect(server.getLocalAddress());
            }

            int clientsDone = 0;
            int accepted = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DEADLINE_SECONDS);
            while (clientsDone < CONNECTIONS) {
                assertTrue(System.nanoTime() - deadline < 0,
                        "all echoes finished in time: " + clientsDone + " of " + CONNECTIONS + " done");
                sel.select(1000);
                for (var it = sel.selectedKeys().iterator(); it.hasNext(); ) {
                    SelectionKey k = it.next();
                    it.remove();
                    if (!k.isValid()) {
                        continue;
                    }
                    if (k.isAcceptable()) {
                        SocketChannel a;
                        while ((a = server.accept()) != null) {
                            all.add(a);
                            accepted++;
                            a.configureBlocking(false);
                            a.register(sel, SelectionKey.OP_READ,
                                    new End(false, 0, random.nextBoolean(), 1 + random.nextInt(8192)));
                        }
                        continue;
                    }
                    SocketChannel ch = (SocketChannel) k.channel();
                    End e = (End) k.attachment();
                    if (k.isConnectable()) {
                        assertTrue(ch.finishConnect());
                        k.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                        continue;
                    }
                    if (e.client) {
                        clientsDone += clientStep(k, ch, e, random) ? 1 : 0;
                    } else {
                        serverStep(k, ch, e);
                    }
                }
            }
            assertEquals(CONNECTIONS, accepted);
        } finally {
            for (SocketChannel c : all) {
                c.close();
            }
        }
    }

    /** Sends the next random chunk when writable, checks what came back; true once the whole echo is in. */
    private static boolean clientStep(SelectionKey k, SocketChannel ch, End e, SplittableRandom random)
            throws IOException {
        if (k.isWritable()) {
            if (!e.out.hasRemaining() && e.sentBytes < e.total) {
                int n = (int) Math.min(e.out.capacity(), e.total - e.sentBytes);
                e.out.clear().limit(n);
                for (int j = 0; j < n; j++) {
                    e.out.put(j, (byte) random.nextInt());
                }
                e.sentCrc.update(e.out.duplicate());
                e.sentBytes += n;
            }
            ch.write(e.out);
            if (!e.out.hasRemaining() && e.sentBytes == e.total) {
                k.interestOps(SelectionKey.OP_READ);
            }
        }
        if (k.isReadable()) {
            e.in.clear();
            int n = ch.read(e.in);
            assertTrue(n >= 0, "the echo server does not close first");
            e.in.flip();
            e.echoCrc.update(e.in);
            e.echoed += n;
            assertTrue(e.echoed <= e.total, "no more bytes come back than were sent");
            if (e.echoed == e.total && !e.done) {
                assertEquals(e.sentCrc.getValue(), e.echoCrc.getValue(), "echo checksum");
                e.done = true;
                ch.close();
                return true;
            }
        }
        return false;
    }

    /** Echoes what it read; reads only when the previous chunk is gone, so OP_WRITE must come back. */
    private static void serverStep(SelectionKey k, SocketChannel ch, End e) throws IOException {
        if (k.isWritable() || (k.isReadable() && !e.out.hasRemaining())) {
            if (!e.out.hasRemaining() && k.isReadable()) {
                e.out.clear();
                int n = ch.read(e.out);
                e.out.flip();
                if (n < 0) {
                    ch.close();
                    return;
                }
            }
            ch.write(e.out);
        }
        k.interestOps(e.out.hasRemaining() ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
    }
}
