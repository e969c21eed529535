package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.selector.EchoSelectorLoop;
import io.rdmanio.selector.Tracked;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The conformance cases that involve the peer, with the peer in a second JVM: an unmodified NIO program
 * ({@link NioPeerMain}) activated by system property on the shm fabric, while this JVM's end runs on rdmanio's
 * provider over the same shm directory.
 */
@Timeout(value = 90)
class ShmCrossProcessConformanceTest {

    @TempDir
    static Path tmp;

    private static ShmNio shm;
    private static PeerJvm peer;

    private final Tracked resources = new Tracked();

    @BeforeAll
    static void start() throws Exception {
        shm = ShmNio.open();
        peer = PeerJvm.peer(shm.dir, PeerJvm.rules(tmp));
    }

    @AfterAll
    static void stop() throws Exception {
        if (peer != null) {
            peer.close();
        }
        if (shm != null) {
            shm.close();
        }
    }

    @AfterEach
    void closeResources() {
        resources.closeAll();
    }

    private <T extends AutoCloseable> T track(T r) {
        return resources.track(r);
    }

    /** A connection accepted here from the peer's connect. */
    private SocketChannel acceptFromPeer() throws Exception {
        ServerSocketChannel server = track(shm.provider.openServerSocketChannel());
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        peer.send("connect " + ((InetSocketAddress) server.getLocalAddress()).getPort());
        SocketChannel a = track(server.accept());
        peer.expect("CONNECTED");
        return a;
    }

    /** A connection from here to a listener of the peer. */
    private SocketChannel connectToPeer() throws Exception {
        int port = Integer.parseInt(peer.ask("listen", "PORT ").substring(5));
        peer.send("accept");
        SocketChannel c = track(shm.provider.openSocketChannel());
        assertTrue(c.connect(new InetSocketAddress("127.0.0.1", port)));
        peer.expect("ACCEPTED");
        return c;
    }

    private static long crc(byte[] b) {
        CRC32 crc = new CRC32();
        crc.update(b);
        return crc.getValue();
    }

    /** Reads (bounded) until end of stream or an error; returns -1, or throws the error. */
    private static int readToEnd(SocketChannel ch, Selector sel) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(4096);
        long deadline = System.nanoTime() + ShmNio.TIMEOUT_NANOS;
        while (System.nanoTime() - deadline < 0) {
            int n = ch.read(b.clear());
            if (n < 0) {
                return n;
            }
            if (n == 0 && sel != null) {
                sel.select(1000);
                sel.selectedKeys().clear();
            }
        }
        return fail("no end of stream within the timeout");
    }

    private static void readFully(SocketChannel ch, ByteBuffer dst, Selector sel) throws IOException {
        long deadline = System.nanoTime() + ShmNio.TIMEOUT_NANOS;
        while (dst.hasRemaining()) {
            assertTrue(System.nanoTime() - deadline < 0, "read made no progress in time");
            int n = ch.read(dst);
            assertTrue(n >= 0, "end of stream before the data");
            if (n == 0 && sel != null) {
                sel.select(1000);
                sel.selectedKeys().clear();
            }
        }
    }

    @ParameterizedTest(name = "blocking={0}")
    @ValueSource(booleans = {true, false})
    void peerShutdownOutputGivesBytesThenEndOfStreamAndHalfCloseStillAnswers(boolean blocking) throws Exception {
        // Blocking: this JVM accepts; non-blocking: this JVM connects to the peer's listener.
        SocketChannel ch = blocking ? acceptFromPeer() : connectToPeer();
        ch.configureBlocking(blocking);
        Selector sel = blocking ? null : track(shm.provider.openSelector());
        if (sel != null) {
            ch.register(sel, SelectionKey.OP_READ);
        }
        peer.ask("write 5000 9", "WROTE 5000");
        peer.ask("shutout", "SHUT");
        ByteBuffer in = ByteBuffer.allocate(5000);
        readFully(ch, in, sel);
        assertArrayEquals(NioPeerMain.pattern(5000, 9), in.array());
        assertEquals(-1, readToEnd(ch, sel), "bytes first, then end of stream");
        assertEquals(-1, ch.read(ByteBuffer.allocate(1)), "end of stream is sticky");
        // Half-closed: this end can still answer, and the peer reads it.
        ByteBuffer two = ByteBuffer.wrap(new byte[] {1, 2});
        while (two.hasRemaining()) {
            ch.write(two);
        }
        assertEquals("READ 2 " + crc(new byte[] {1, 2}), peer.ask("read 2", "READ "));
        peer.ask("close", "CLOSED");
    }

    @Test
    void interruptedSelectorThreadServesClientsOfAnotherProcess() throws Exception {
        // A selector loop whose thread carries its interrupt status (select returns at once, as the JDK documents)
        // serves 50 clients of another process that connect at once, as it does on TCP: accept, echo and close
        // all run on that thread.
        ServerSocketChannel server = track(shm.provider.openServerSocketChannel());
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        server.configureBlocking(false);
        Selector sel = track(shm.provider.openSelector());
        server.register(sel, SelectionKey.OP_ACCEPT);
        int clients = 50;
        java.util.concurrent.atomic.AtomicInteger served = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.CompletableFuture<Boolean> loop = new java.util.concurrent.CompletableFuture<>();
        Thread t = new Thread(() -> {
            Thread.currentThread().interrupt();
            try {
                loop.complete(EchoSelectorLoop.serve(sel, server, served, 64 * 1024, () -> !stop.get()));
            } catch (Throwable e) {
                loop.completeExceptionally(e);
            }
        }, "interrupted-selector");
        t.setDaemon(true);
        t.start();
        try (PeerJvm client = PeerJvm.start(shm.dir, PeerJvm.rules(tmp), null, EchoClientMain.class,
                Integer.toString(((InetSocketAddress) server.getLocalAddress()).getPort()), Integer.toString(clients),
                "2000", "13")) {
            assertEquals(0, client.awaitExit(), client::output);
            assertTrue(client.output().contains("OK " + clients), client::output);
        }
        long deadline = System.nanoTime() + ShmNio.TIMEOUT_NANOS;
        while (served.get() < clients && !loop.isDone() && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
        stop.set(true);
        assertTrue(loop.get(ShmNio.TIMEOUT_SECONDS, java.util.concurrent.TimeUnit.SECONDS),
            "the selector thread keeps its interrupt status");
        assertEquals(clients, served.get(), "every client served to its end of stream");
    }

    @Test
    void peerCloseIsSelectedReadableThenEndOfStream() throws Exception {
        SocketChannel ch = acceptFromPeer();
        ch.configureBlocking(false);
        Selector sel = track(shm.provider.openSelector());
        SelectionKey key = ch.register(sel, SelectionKey.OP_READ);
        assertEquals(0, sel.selectNow(), "nothing to read yet");
        peer.ask("write 100 4", "WROTE 100");
        peer.ask("close", "CLOSED");
        ByteBuffer in = ByteBuffer.allocate(100);
        readFully(ch, in, sel);
        assertArrayEquals(NioPeerMain.pattern(100, 4), in.array());
        sel.selectedKeys().clear();
        assertEquals(1, sel.select(ShmNio.TIMEOUT_SECONDS * 1000), "the peer's close is selected");
        assertTrue(key.isReadable());
        assertEquals(-1, ch.read(ByteBuffer.allocate(10)));
    }

    @ParameterizedTest(name = "blocking={0}")
    @ValueSource(booleans = {true, false})
    void peerLingerZeroCloseResetsThisEnd(boolean blocking) throws Exception {
        SocketChannel ch = acceptFromPeer();
        ch.configureBlocking(blocking);
        Selector sel = blocking ? null : track(shm.provider.openSelector());
        if (sel != null) {
            ch.register(sel, SelectionKey.OP_READ);
        }
        peer.ask("reset", "RESET");
        IOException e = assertThrows(IOException.class, () -> readToEnd(ch, sel), "an abortive close resets the peer");
        assertFalse(e instanceof ClosedChannelException, "the error is the peer's reset, not a local close: " + e);
        assertNotNull(e.getMessage());
        assertTrue(e.getMessage().toLowerCase().contains("reset"), "the error says reset: " + e);
    }

    @Test
    void writeReadinessReturnsWhenTheSlowPeerDrains() throws Exception {
        SocketChannel ch = connectToPeer();
        ch.configureBlocking(false);
        Selector sel = track(shm.provider.openSelector());
        SelectionKey key = ch.register(sel, 0);
        byte[] block = NioPeerMain.pattern(64 * 1024, 21);
        ByteBuffer src = ByteBuffer.wrap(block);
        CRC32 sent = new CRC32();
        long written = 0;
        key.interestOps(SelectionKey.OP_WRITE);
        // The peer reads nothing yet: writes fill whatever the transport buffers, until a write returns 0 and
        // the selector then holds OP_WRITE back (buffered bytes may still move on, as TCP's do, freeing room).
        while (true) {
            assertTrue(written < 512L * 1024 * 1024, "writes never stopped with the peer not reading");
            if (!src.hasRemaining()) {
                src.clear();
            }
            int pos = src.position();
            int n = ch.write(src);
            sent.update(block, pos, n);
            written += n;
            if (n == 0) {
                sel.selectedKeys().clear();
                if (sel.select(500) == 0) {
                    break;
                }
            }
        }
        System.out.println("buffered before the peer read: " + written + " bytes");
        long total = written + 4L * 1024 * 1024;
        peer.send("read " + total);
        long deadline = System.nanoTime() + ShmNio.TIMEOUT_NANOS * 3;
        boolean wokeWritable = false;
        while (written < total) {
            assertTrue(System.nanoTime() - deadline < 0, "OP_WRITE did not come back while the peer drained");
            sel.select(1000);
            if (sel.selectedKeys().remove(key) && key.isWritable()) {
                wokeWritable = true;
            }
            if (!src.hasRemaining()) {
                src.clear();
            }
            int pos = src.position();
            int room = (int) Math.min(src.remaining(), total - written);
            ByteBuffer slice = src.duplicate().limit(pos + room);
            int n = ch.write(slice);
            src.position(pos + n);
            sent.update(block, pos, n);
            written += n;
        }
        assertTrue(wokeWritable, "a select reported OP_WRITE once the peer drained");
        // As an event loop does, this end keeps selecting (a writer that stops touching channels altogether is
        // PolledNonBlockingParityTest's case: the engine's closer moves its staged bytes on).
        key.interestOps(0);
        String answer = null;
        while (answer == null) {
            assertTrue(System.nanoTime() - deadline < 0, "the peer did not receive every byte in time");
            sel.select(50);
            answer = peer.poll("READ ", 0);
        }
        assertEquals("READ " + total + " " + sent.getValue(), answer, "every byte, in order");
        peer.ask("close", "CLOSED");
    }

    @Test
    void socketAdaptorBlockingReadWithTimeout() throws Exception {
        SocketChannel ch = acceptFromPeer();
        Socket s = ch.socket();
        s.setSoTimeout(200);
        InputStream in = s.getInputStream();
        assertThrows(SocketTimeoutException.class, in::read, "read with SO_TIMEOUT and the peer sending nothing");
        assertFalse(s.isClosed(), "a timed-out read leaves the socket open");
        peer.send("write 70000 11");
        s.setSoTimeout((int) (ShmNio.TIMEOUT_SECONDS * 1000));
        byte[] got = in.readNBytes(70000);
        peer.expect("WROTE 70000");
        assertArrayEquals(NioPeerMain.pattern(70000, 11), got);
        peer.ask("shutout", "SHUT");
        assertEquals(-1, in.read(), "the peer's shutdownOutput ends the stream");
        s.getOutputStream().write(new byte[] {9});
        assertEquals("READ 1 " + crc(new byte[] {9}), peer.ask("read 1", "READ "));
        peer.ask("close", "CLOSED");
    }
}
