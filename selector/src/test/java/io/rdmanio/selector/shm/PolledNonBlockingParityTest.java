package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TCP parity of polled non-blocking I/O: non-blocking channels driven in a loop by one thread, with no selector
 * and no other thread of this JVM touching them, against a peer in a second JVM ({@link NioPeerMain}). Each
 * scenario is written once and run on the JDK's TCP (this JVM on the JDK's own provider, the peer with rdmanio
 * and a rules file that routes nothing) and on the shm fabric (both JVMs on rdmanio), with the same outcome.
 * Nothing waits with a bare sleep; every loop has a deadline.
 */
@Timeout(value = 120)
class PolledNonBlockingParityTest extends PeerParity.Base {

    private static long deadline() {
        return System.nanoTime() + ShmNio.TIMEOUT_NANOS;
    }

    private static void ensureBefore(long deadline, String what) {
        assertTrue(System.nanoTime() - deadline < 0, what + " made no progress in time, polling without a selector");
    }

    private static long crc(byte[] b) {
        CRC32 crc = new CRC32();
        crc.update(b);
        return crc.getValue();
    }

    /** A non-blocking connect to the peer's listener, completed by polling finishConnect. */
    private SocketChannel connectPolled() throws Exception {
        int port = Integer.parseInt(peer.ask("listen", "PORT ").substring(5));
        peer.send("accept");
        SocketChannel c = track(provider.openSocketChannel());
        c.configureBlocking(false);
        boolean connected = c.connect(new InetSocketAddress("127.0.0.1", port));
        long deadline = deadline();
        while (!connected) {
            ensureBefore(deadline, "finishConnect");
            connected = c.finishConnect();
            Thread.onSpinWait();
        }
        peer.expect("ACCEPTED");
        return c;
    }

    /** Writes all of {@code src} with non-blocking writes, polling. */
    private static void writePolled(SocketChannel ch, ByteBuffer src) throws IOException {
        long deadline = deadline();
        while (src.hasRemaining()) {
            ensureBefore(deadline, "write");
            if (ch.write(src) == 0) {
                Thread.onSpinWait();
            }
        }
    }

    /** Fills {@code dst} with non-blocking reads, polling. */
    private static void readPolled(SocketChannel ch, ByteBuffer dst) throws IOException {
        long deadline = deadline();
        while (dst.hasRemaining()) {
            ensureBefore(deadline, "read");
            int n = ch.read(dst);
            assertTrue(n >= 0, "end of stream before the data");
            if (n == 0) {
                Thread.onSpinWait();
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"tcp", "shm"})
    void polledEchoWithoutASelector(String transport) throws Exception {
        on(transport);
        SocketChannel c = connectPolled();
        byte[] request = NioPeerMain.pattern(64, 5);
        writePolled(c, ByteBuffer.wrap(request));
        assertEquals("READ 64 " + crc(request), peer.ask("read 64", "READ "));
        peer.ask("write 64 6", "WROTE 64");
        ByteBuffer answer = ByteBuffer.allocate(64);
        readPolled(c, answer);
        assertArrayEquals(NioPeerMain.pattern(64, 6), answer.array());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"tcp", "shm"})
    void polledAcceptWithoutASelector(String transport) throws Exception {
        on(transport);
        ServerSocketChannel server = track(provider.openServerSocketChannel());
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        server.configureBlocking(false);
        peer.send("connect " + ((InetSocketAddress) server.getLocalAddress()).getPort());
        SocketChannel a = null;
        long deadline = deadline();
        while (a == null) {
            ensureBefore(deadline, "accept");
            a = server.accept();
            Thread.onSpinWait();
        }
        track(a);
        peer.expect("CONNECTED");
        a.configureBlocking(false);
        peer.ask("write 100 8", "WROTE 100");
        ByteBuffer in = ByteBuffer.allocate(100);
        readPolled(a, in);
        assertArrayEquals(NioPeerMain.pattern(100, 8), in.array());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"tcp", "shm"})
    void polledWritesOf8MiBReachAReader(String transport) throws Exception {
        on(transport);
        SocketChannel c = connectPolled();
        int total = 8 << 20;
        byte[] data = NioPeerMain.pattern(total, 12);
        peer.send("read " + total);
        writePolled(c, ByteBuffer.wrap(data));
        // The last write returned; this JVM now touches no channel: what it accepted must still arrive.
        assertEquals("READ " + total + " " + crc(data), peer.expect("READ "));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"tcp", "shm"})
    void bytesAWriteAcceptedLeaveWhileTheWriterSleeps(String transport) throws Exception {
        on(transport);
        SocketChannel c = connectPolled();
        byte[] block = NioPeerMain.pattern(64 * 1024, 13);
        ByteBuffer src = ByteBuffer.wrap(block);
        CRC32 sent = new CRC32();
        long written = 0;
        long deadline = deadline();
        int zeros = 0;
        // The peer reads nothing yet: write until the transport takes no more (a few writes in a row return 0).
        while (zeros < 100) {
            ensureBefore(deadline, "filling the window");
            assertTrue(written < 512L * 1024 * 1024, "writes never stopped with the peer not reading");
            if (!src.hasRemaining()) {
                src.clear();
            }
            int pos = src.position();
            int n = c.write(src);
            sent.update(block, pos, n);
            written += n;
            zeros = n == 0 ? zeros + 1 : 0;
        }
        // Now the peer reads every byte while this JVM only waits for its answer, touching no channel.
        String answer = peer.ask("read " + written, "READ ");
        assertNotNull(answer);
        assertEquals("READ " + written + " " + sent.getValue(), answer, "every accepted byte, in order");
    }
}
