package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.selector.RdmaSelectorProvider;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TCP parity of the listener's backlog: a connect completes, and the bytes written on it wait, while the listening
 * process does not accept and has no thread in a selector or a channel operation; a listener closed with
 * connections it never accepted resets them. The listener is a second JVM ({@link NioPeerMain}) whose only busy
 * thread reads commands from its stdin; each scenario runs on the JDK's TCP (this JVM on the JDK's own provider,
 * the peer with a rules file that routes nothing) and on the shm fabric (both JVMs on rdmanio), with the same
 * outcome.
 */
@Timeout(value = 120)
class AcceptBacklogParityTest {

    /** Bytes written before the accept: within what TCP's socket buffers and rdmanio's receive ring hold. */
    private static final int EARLY_BYTES = 16 * 1024;

    @TempDir
    static Path tmp;

    private static ShmNio shm;
    private static PeerJvm shmPeer;
    private static PeerJvm tcpPeer;

    private final List<AutoCloseable> resources = new ArrayList<>();
    private SelectorProvider provider;
    private PeerJvm peer;
    /** The peer holds an accepted connection of this test. */
    private boolean peerAccepted;

    @BeforeAll
    static void start() throws Exception {
        shm = ShmNio.open();
        shmPeer = PeerJvm.peer(shm.dir, PeerJvm.rules(tmp));
        Path none = tmp.resolve("nothing-routed.rules");
        Files.writeString(none, "# no rule: every connection on the JDK's TCP\n");
        tcpPeer = PeerJvm.peer(shm.dir, none);
    }

    @AfterAll
    static void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {tcpPeer, shmPeer, shm}) {
            if (c != null) {
                c.close();
            }
        }
    }

    @AfterEach
    void closeResources() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                // best effort
            }
        }
        if (peer != null && peerAccepted) {
            // One connection at a time in the peer: end this test's.
            peer.send("close");
            peer.poll("CLOSED", 2000);
        }
    }

    private void on(String transport) throws Exception {
        if ("tcp".equals(transport)) {
            Method m = RdmaSelectorProvider.class.getDeclaredMethod("jdkProvider");
            m.setAccessible(true);
            provider = (SelectorProvider) m.invoke(null);
            peer = tcpPeer;
        } else {
            provider = shm.provider;
            peer = shmPeer;
        }
    }

    private <T extends AutoCloseable> T track(T r) {
        resources.add(r);
        return r;
    }

    /** Connects to a fresh listener of the peer, which does not accept, through the socket adaptor with a timeout. */
    private SocketChannel connectUnaccepted(int timeoutMillis) throws Exception {
        int port = Integer.parseInt(peer.ask("listen", "PORT ").substring(5));
        SocketChannel c = track(provider.openSocketChannel());
        Socket s = c.socket();
        s.connect(new InetSocketAddress("127.0.0.1", port), timeoutMillis);
        assertTrue(c.isConnected());
        return c;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"tcp", "shm"})
    void aConnectCompletesAndItsBytesWaitUntilTheListenerAccepts(String transport) throws Exception {
        on(transport);
        // A timeout far below what the listener takes to accept (it never does until told below).
        SocketChannel c = connectUnaccepted(2000);
        byte[] early = NioPeerMain.pattern(EARLY_BYTES, 3);
        ByteBuffer b = ByteBuffer.wrap(early);
        while (b.hasRemaining()) {
            c.write(b);
        }
        // Still nobody in the listening process has touched the listener: now it accepts, and reads the bytes.
        peer.ask("accept", "ACCEPTED");
        peerAccepted = true;
        CRC32 crc = new CRC32();
        crc.update(early);
        assertEquals("READ " + EARLY_BYTES + " " + crc.getValue(), peer.ask("read " + EARLY_BYTES, "READ "));
        // And the connection is an ordinary one from then on, both ways.
        assertEquals("WROTE 100", peer.ask("write 100 4", "WROTE "));
        ByteBuffer in = ByteBuffer.allocate(100);
        while (in.hasRemaining()) {
            assertTrue(c.read(in) >= 0, "end of stream before the listener's answer");
        }
        assertEquals(ByteBuffer.wrap(NioPeerMain.pattern(100, 4)), in.flip());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"tcp", "shm"})
    void aClientThatWroteAndClosedBeforeTheAcceptIsReadToItsEnd(String transport) throws Exception {
        on(transport);
        SocketChannel c = connectUnaccepted(2000);
        byte[] early = NioPeerMain.pattern(EARLY_BYTES, 7);
        ByteBuffer b = ByteBuffer.wrap(early);
        while (b.hasRemaining()) {
            c.write(b);
        }
        c.close();
        // The bytes and the end of stream wait in the accept queue for the accept that comes after the close.
        peer.ask("accept", "ACCEPTED");
        peerAccepted = true;
        CRC32 crc = new CRC32();
        crc.update(early);
        assertEquals("EOF " + EARLY_BYTES + " " + crc.getValue(), peer.ask("readall", "EOF "));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"tcp", "shm"})
    void aListenerClosedWithoutAcceptingResetsTheConnectionsItHeld(String transport) throws Exception {
        on(transport);
        SocketChannel c = connectUnaccepted(2000);
        peer.ask("closelisten", "LISTEN-CLOSED");
        IOException e = assertThrows(IOException.class, () -> {
            ByteBuffer in = ByteBuffer.allocate(16);
            // TCP's reset arrives at once; the loop only bounds a peer that answers with bytes instead.
            for (int i = 0; i < 16; i++) {
                if (c.read(in.clear()) < 0) {
                    throw new AssertionError("end of stream where TCP resets");
                }
            }
        });
        assertTrue(String.valueOf(e.getMessage()).contains("reset"), "the error names the reset: " + e);
    }
}
