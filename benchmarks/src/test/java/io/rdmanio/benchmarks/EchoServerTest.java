package io.rdmanio.benchmarks;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The benchmarks' server and helpers, on the JDK's TCP (the fabric runs are what the benchmarks measure). */
@Timeout(60)
class EchoServerTest {

    @Test
    void echoReturnsEveryByteInOrderEvenWhenLargerThanItsBuffer() throws IOException {
        try (EchoServer s = new EchoServer(new InetSocketAddress("127.0.0.1", 0), 0).start();
             SocketChannel ch = SocketChannel.open(s.address())) {
            ch.write(ByteBuffer.wrap(new byte[] {EchoServer.ECHO}));
            byte[] sent = new byte[300_000];
            new Random(7).nextBytes(sent);
            ByteBuffer out = ByteBuffer.wrap(sent);
            ByteBuffer in = ByteBuffer.allocate(sent.length);
            ch.configureBlocking(false);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            // Write and read together: the echo comes back while the rest is still being sent.
            while (in.hasRemaining() && System.nanoTime() < deadline) {
                ch.write(out);
                if (ch.read(in) < 0) {
                    throw new IOException("server closed after " + in.position() + " bytes");
                }
            }
            assertArrayEquals(sent, in.array());
        }
    }

    @Test
    void connectionProbeAnswersOneByteAndClosesAfterTheClient() throws IOException {
        try (EchoServer s = new EchoServer(new InetSocketAddress("127.0.0.1", 0), 0).start()) {
            for (int i = 0; i < 20; i++) {
                try (SocketChannel ch = SocketChannel.open(s.address())) {
                    ch.write(ByteBuffer.wrap(new byte[] {EchoServer.CONNECT}));
                    ByteBuffer answer = ByteBuffer.allocate(1);
                    while (answer.hasRemaining()) {
                        assertTrue(ch.read(answer) >= 0, "server closed before answering");
                    }
                    assertEquals(EchoServer.ACCEPTED, answer.get(0));
                }
            }
        }
    }

    @Test
    void sinkReadsEverythingAndAnswersNothing() throws IOException {
        try (EchoServer s = new EchoServer(new InetSocketAddress("127.0.0.1", 0), 0).start();
             SocketChannel ch = SocketChannel.open(s.address())) {
            ch.write(ByteBuffer.wrap(new byte[] {EchoServer.SINK}));
            ByteBuffer out = ByteBuffer.allocateDirect(4 << 20);
            // 64 MiB through a blocking channel completes only if the server keeps reading.
            for (int i = 0; i < 16; i++) {
                out.clear();
                while (out.hasRemaining()) {
                    ch.write(out);
                }
            }
            ch.shutdownOutput();
            ch.configureBlocking(true);
            assertEquals(-1, ch.read(ByteBuffer.allocate(1)), "the sink sent bytes back");
        }
    }

    @Test
    void unknownModeByteClosesTheConnection() throws IOException {
        try (EchoServer s = new EchoServer(new InetSocketAddress("127.0.0.1", 0), 0).start();
             SocketChannel ch = SocketChannel.open(s.address())) {
            ch.write(ByteBuffer.wrap(new byte[] {'?', 1, 2, 3}));
            assertEquals(-1, ch.read(ByteBuffer.allocate(8)));
        }
    }

    @Test
    void transportFlagsAndTheActiveCheck(@TempDir Path dir) throws IOException {
        Path rules = Transport.writeRules(dir);
        assertTrue(Files.readString(rules).contains("connect 127.0.0.1  *"));
        assertEquals(List.of("-Dbench.transport=tcp"), Transport.TCP.jvmFlags(rules));
        List<String> shm = Transport.SHM.jvmFlags(rules);
        assertTrue(shm.contains("-Djava.nio.channels.spi.SelectorProvider=" + Transport.RDMA_PROVIDER), shm::toString);
        assertTrue(shm.contains("-Drdmanio.fabric=shm"), shm::toString);
        assertTrue(shm.contains("-Drdmanio.rules=" + rules), shm::toString);
        // This JVM runs the JDK's provider: it is a tcp JVM and must refuse to measure a fabric row.
        Transport.ensureActive(Transport.TCP);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Transport.ensureActive(Transport.SHM));
        assertTrue(e.getMessage().contains("transport shm asked for"), e.getMessage());
    }

    @Test
    void connectionTestTableShowsRatiosAndSkips() {
        ConnectionTest.Result tcp = new ConnectionTest.Result("tcp");
        tcp.roundTrips = 1000;
        tcp.seconds = 10;
        ConnectionTest.Result shm = new ConnectionTest.Result("shm");
        shm.roundTrips = 500;
        shm.seconds = 10;
        ConnectionTest.Result disni = new ConnectionTest.Result("disni");
        disni.skipped = "no RDMA device";
        String table = ConnectionTest.table(List.of(tcp, shm, disni));
        assertTrue(table.contains("0.50x"), table);
        assertTrue(table.contains("disni      skipped: no RDMA device"), table);
        String json = ConnectionTest.json(List.of(tcp, shm, disni), 10, 8);
        assertTrue(json.contains("\"roundTripsPerSecond\": 50.0"), json);
        assertTrue(json.contains("\"skipped\": \"no RDMA device\""), json);
    }
}
