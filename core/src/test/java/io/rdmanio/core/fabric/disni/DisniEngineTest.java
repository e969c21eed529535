package io.rdmanio.core.fabric.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.engine.Connection;
import io.rdmanio.core.engine.ConnectionOptions;
import io.rdmanio.core.engine.Engine;
import io.rdmanio.core.engine.EngineConfig;
import io.rdmanio.core.engine.Engines;
import io.rdmanio.core.engine.Listener;
import io.rdmanio.core.fabric.Fabrics;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The connection engine over the disni fabric on a real verbs device: echo of checksummed messages from 1 byte to
 * 4 MiB on two connections at once with no receiver-not-ready ever, a refused connect, and a peer process killed
 * mid-stream. Skipped where no RDMA device exists.
 */
class DisniEngineTest {

    static final int MAX_MESSAGE = 4 << 20;

    static DisniFabric fabric;
    static Engine server;
    static Engine client;
    static Listener listener;

    @BeforeAll
    static void open() throws IOException {
        Rdma.assumeDevice();
        fabric = (DisniFabric) Fabrics.open("disni", Map.of());
        server = Engines.open(fabric, EngineConfig.DEFAULT);
        client = Engines.open(fabric, EngineConfig.DEFAULT);
        listener = server.listen(new InetSocketAddress(fabric.deviceAddress(), 0), 16, ConnectionOptions.DEFAULT);
    }

    @AfterAll
    static void close() throws IOException {
        if (fabric != null) {
            listener.close();
            client.close();
            server.close();
            fabric.close();
        }
    }

    private static String device() {
        return DisniDevices.devices().get(0);
    }

    /** Echoes everything it reads until end of stream, then ends its own. */
    private static Void echo(Connection c) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(1 << 16);
        try (c) {
            for (;;) {
                buf.clear();
                if (Blocking.read(c, buf) < 0) {
                    c.shutdownOutput();
                    return null;
                }
                buf.flip();
                Blocking.writeFully(c, buf);
            }
        }
    }

    /** Sends each message and reads its echo, checking both checksums; returns the bytes echoed. */
    private static long exchange(Connection c, int[] sizes, long seed) throws IOException {
        Random random = new Random(seed);
        ByteBuffer out = ByteBuffer.allocate(MAX_MESSAGE);
        ByteBuffer in = ByteBuffer.allocateDirect(MAX_MESSAGE);
        long total = 0;
        for (int size : sizes) {
            out.clear().limit(size);
            random.nextBytes(out.array());
            CRC32 sent = new CRC32();
            sent.update(out.array(), 0, size);
            in.clear().limit(size);
            // Write and read at once: a 4 MiB message does not fit the credit window.
            while (out.hasRemaining() || in.hasRemaining()) {
                if (out.hasRemaining()) {
                    c.write(new ByteBuffer[] {out}, 0, 1);
                }
                if (in.hasRemaining()) {
                    long n = c.read(new ByteBuffer[] {in}, 0, 1);
                    if (n < 0) {
                        fail("end of stream during the echo of a " + size + "-byte message");
                    }
                    if (n == 0 && (!out.hasRemaining() || c.readyOps() == 0)) {
                        c.await(io.rdmanio.core.engine.Readiness.READ
                            | (out.hasRemaining() ? io.rdmanio.core.engine.Readiness.WRITE : 0),
                            Blocking.TIMEOUT_NANOS);
                    }
                }
            }
            in.flip();
            CRC32 received = new CRC32();
            received.update(in);
            assertEquals(sent.getValue(), received.getValue(), "checksum of the echo of a " + size + "-byte message");
            total += size;
        }
        c.shutdownOutput();
        in.clear();
        assertEquals(-1, Blocking.read(c, in), "the echo ends its stream after ours");
        c.close();
        return total;
    }

    @Test
    void twoConnectionsEchoMessagesFromOneByteToFourMebibytesWithNoReceiverNotReady() throws Exception {
        long naksBefore = DisniDevices.receiverNotReadyNaks(device());
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Long>> clients = new ArrayList<>();
            List<Future<Void>> echoes = new ArrayList<>();
            for (int k = 0; k < 2; k++) {
                Random r = new Random(1000 + k);
                int[] sizes = new int[12];
                sizes[0] = 1;
                sizes[1] = MAX_MESSAGE;
                sizes[2] = EngineConfig.DEFAULT_SLOT_SIZE;
                for (int i = 3; i < sizes.length; i++) {
                    sizes[i] = 1 + r.nextInt(r.nextBoolean() ? 4096 : 512 << 10);
                }
                long seed = 77 + k;
                // Accepting drives the server engine, which the connect waits for.
                Connection c = client.connect(listener.localAddress(), null);
                Connection accepted = Blocking.accept(listener);
                Blocking.finishConnect(c);
                echoes.add(pool.submit(() -> echo(accepted)));
                clients.add(pool.submit(() -> exchange(c, sizes, seed)));
            }
            for (Future<Long> f : clients) {
                assertTrue(f.get(5, TimeUnit.MINUTES) >= MAX_MESSAGE);
            }
            for (Future<Void> f : echoes) {
                f.get(1, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(0, fabric.receiverNotReadyCount(), "sends that found no receive posted");
        long naksAfter = DisniDevices.receiverNotReadyNaks(device());
        System.out.printf("receiver-not-ready NAKs counted by %s: %d before, %d after%n", device(), naksBefore,
            naksAfter);
        if (naksBefore >= 0) {
            assertEquals(naksBefore, naksAfter, "receiver-not-ready NAKs counted by " + device());
        }
    }

    @Test
    void aConnectToAPortWithoutListenerIsRefused() throws Exception {
        Listener gone = server.listen(new InetSocketAddress(fabric.deviceAddress(), 0), 1, ConnectionOptions.DEFAULT);
        InetSocketAddress address = gone.localAddress();
        gone.close();
        Connection c = client.connect(address, null);
        try {
            long deadline = System.nanoTime() + Blocking.TIMEOUT_NANOS;
            while (!c.finishConnect()) {
                c.await(io.rdmanio.core.engine.Readiness.CONNECT, deadline - System.nanoTime());
                if (System.nanoTime() - deadline > 0) {
                    fail("no outcome for a connect to " + address);
                }
            }
            fail("connected to a closed listener at " + address);
        } catch (ConnectException expected) {
            assertTrue(expected.getMessage().startsWith("Connection refused"), expected.getMessage());
        } finally {
            c.close();
        }
    }

    @Test
    void aPeerKilledMidStreamEndsTheSurvivorsStream() throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<String> command = new ArrayList<>(List.of(java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-cp", System.getProperty("java.class.path")));
        String library = System.getProperty(DisniRuntime.LIBRARY_PROPERTY);
        if (library != null) {
            command.add("-D" + DisniRuntime.LIBRARY_PROPERTY + "=" + library);
        }
        command.addAll(List.of(DisniPeer.class.getName(), listener.localAddress().getAddress().getHostAddress(),
            Integer.toString(listener.localAddress().getPort()), Long.toString(1L << 40)));
        Process peer = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            // Accepting drives the server's progress: the peer's connect completes only then.
            Connection c = Blocking.accept(listener);
            BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(),
                StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null && !line.equals("CONNECTED")) {
                System.out.println("peer: " + line);
            }
            assertEquals("CONNECTED", line, "the peer process did not connect");
            ByteBuffer buf = ByteBuffer.allocateDirect(1 << 16);
            long received = 0;
            while (received < (4 << 20)) {
                buf.clear();
                int n = Blocking.read(c, buf);
                assertTrue(n > 0, "the stream ended before the peer was killed");
                received += n;
            }
            peer.destroyForcibly();
            long killed = System.nanoTime();
            String outcome = null;
            while (outcome == null) {
                buf.clear();
                try {
                    if (Blocking.read(c, buf) < 0) {
                        outcome = "end of stream";
                    }
                } catch (IOException e) {
                    outcome = e.getMessage();
                }
            }
            System.out.printf("survivor saw '%s' %.0f ms after SIGKILL%n", outcome,
                (System.nanoTime() - killed) / 1e6);
            c.close();
        } finally {
            peer.destroyForcibly();
            peer.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
