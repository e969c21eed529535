package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Timeout;
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
class AcceptBacklogParityTest extends PeerParity.Base {

    /** Bytes written before the accept: within what TCP's socket buffers and rdmanio's receive ring hold. */
    private static final int EARLY_BYTES = 16 * 1024;

    /** This test's connection to the peer's listener. */
    private SocketChannel client;
    /** The peer holds an accepted connection of this test. */
    private boolean peerAccepted;

    @Override
    boolean peerHoldsConnection() {
        return peerAccepted;
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

    /** The peer accepts the connection waiting at its listener (and holds it until the test ends). */
    private void acceptInPeer() throws Exception {
        peer.ask("accept", "ACCEPTED");
        peerAccepted = true;
    }

    /** Writes the pattern of {@code seed} ({@link NioPeerMain#pattern}) and returns what the peer reports for it. */
    private static String writePattern(SocketChannel c, int bytes, int seed) throws IOException {
        byte[] data = NioPeerMain.pattern(bytes, seed);
        ByteBuffer b = ByteBuffer.wrap(data);
        while (b.hasRemaining()) {
            c.write(b);
        }
        CRC32 crc = new CRC32();
        crc.update(data);
        return bytes + " " + crc.getValue();
    }

    /**
     * On {@code transport}: connects to a listener of the peer that does not accept, with a connect timeout far below
     * the time until it does (it never does until told), and writes {@link #EARLY_BYTES} of the pattern of
     * {@code seed}; the channel is {@link #client}. Returns what the peer reports for those bytes.
     */
    private String connectAndWriteEarly(String transport, int seed) throws Exception {
        on(transport);
        client = connectUnaccepted(2000);
        return writePattern(client, EARLY_BYTES, seed);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"tcp", "shm"})
    void aConnectCompletesAndItsBytesWaitUntilTheListenerAccepts(String transport) throws Exception {
        String written = connectAndWriteEarly(transport, 3);
        SocketChannel c = client;
        // Still nobody in the listening process has touched the listener: now it accepts, and reads the bytes.
        acceptInPeer();
        assertEquals("READ " + written, peer.ask("read " + EARLY_BYTES, "READ "));
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
        String written = connectAndWriteEarly(transport, 7);
        client.close();
        // The bytes and the end of stream wait in the accept queue for the accept that comes after the close.
        acceptInPeer();
        assertEquals("EOF " + written, peer.ask("readall", "EOF "));
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
