package io.rdmanio.selector.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmanio.core.engine.Engines;
import io.rdmanio.selector.RdmaSelectorProvider;
import io.rdmanio.selector.config.RdmanioConfig;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TCP's promise at each way a writer ends: every byte a write accepted reaches a slow reader, then end of stream.
 * The scenario is written once ({@link #readSlowly}) and run against the JDK's TCP and rdmanio: with the writer in
 * a second JVM that ends in each of five ways ({@link WriterEndingMain}: return from main or {@code System.exit}
 * with the channel open, close then return or exit, shutdownOutput then exit; and a shutdown hook that writes the
 * last bytes and closes), over the JDK's TCP and over shm;
 * and, where exit cannot be tested, with the writer in this JVM closing (plainly, after shutdownOutput, or with
 * {@code SO_LINGER} of a few seconds), over the JDK's TCP, rdmanio's loopback fabric and shm.
 */
@Timeout(value = 120)
class WriterEndingParityTest {

    private static final int MB3 = 3 << 20;
    /**
     * More than a reader that never reads holds (its ring and spill, 4 MiB), less than that and the writer's
     * staging (2 MiB on shm) together: the write returns, and the exit finds bytes it cannot deliver.
     */
    private static final int MB5 = 5 << 20;
    /** Bytes per read of the slow reader, and how long it pauses after each (a reader slower than the writer). */
    private static final int READ_CHUNK = 32 << 10;
    private static final long READ_PAUSE_MILLIS = 3;

    @TempDir
    static Path tmp;

    private static ShmNio shm;
    private static SelectorProvider loopback;

    @BeforeAll
    static void start() throws IOException {
        shm = ShmNio.open();
        loopback = new RdmaSelectorProvider(new RdmanioConfig(ShmNio.router(a -> a.getAddress().isLoopbackAddress()),
            (peer, listening) -> Engines.get("loopback"), "loopback", null));
    }

    @AfterAll
    static void stop() throws IOException {
        if (shm != null) {
            shm.close();
        }
    }

    private static SelectorProvider provider(String transport) {
        switch (transport) {
            case "tcp":
                // The test JVM does not install rdmanio system-wide: this is the JDK's own provider.
                assertFalse(SelectorProvider.provider() instanceof RdmaSelectorProvider);
                return SelectorProvider.provider();
            case "loopback":
                return loopback;
            case "shm":
                return shm.provider;
            default:
                throw new IllegalArgumentException(transport);
        }
    }

    @ParameterizedTest(name = "{0}, {1} bytes, writer JVM ends by {2}")
    @CsvSource({
        "tcp, 3145728, return", "tcp, 3145728, exit", "tcp, 3145728, close-return", "tcp, 3145728, close-exit",
        "tcp, 3145728, shutout-exit", "tcp, 102400, return", "tcp, 3145728, hook-close", "tcp, 3145728, hook-slow",
        "shm, 3145728, return", "shm, 3145728, exit", "shm, 3145728, close-return", "shm, 3145728, close-exit",
        "shm, 3145728, shutout-exit", "shm, 102400, return", "shm, 3145728, hook-close", "shm, 3145728, hook-slow",
        "tcp, 102400, exit-blocked", "shm, 102400, exit-blocked",
    })
    void writerInAnotherJvm(String transport, int bytes, String ending) throws Exception {
        try (ServerSocketChannel server = provider(transport).openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (Child writer = writer(transport, server, bytes, ending)) {
                try (SocketChannel reader = server.accept()) {
                    readSlowly(reader, NioPeerMain.pattern(bytes, 5), writer);
                }
                assertEquals(0, writer.awaitExit(), "the writer's exit status; it printed: " + writer.output());
                // Threads still blocked at exit stay blocked, as on TCP: none of them is shown an end of stream, a
                // closed channel or a readiness the exit made.
                assertFalse(writer.output().contains("ERROR"), "the writer printed: " + writer.output());
            }
        }
    }

    @ParameterizedTest(name = "{0}, writer thread ends by {1}")
    @CsvSource({
        "tcp, close", "tcp, shutout-close", "tcp, linger-close",
        "loopback, close", "loopback, shutout-close", "loopback, linger-close",
        "shm, close", "shm, shutout-close", "shm, linger-close",
    })
    void writerInThisJvm(String transport, String ending) throws Exception {
        SelectorProvider p = provider(transport);
        byte[] data = NioPeerMain.pattern(MB3, 5);
        try (ServerSocketChannel server = p.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            CompletableFuture<Void> wrote = new CompletableFuture<>();
            Thread writer = new Thread(() -> {
                try {
                    SocketChannel ch = p.openSocketChannel();
                    ch.connect(server.getLocalAddress());
                    if (ending.equals("linger-close")) {
                        ch.setOption(StandardSocketOptions.SO_LINGER, 20);
                    }
                    ByteBuffer b = ByteBuffer.wrap(data);
                    while (b.hasRemaining()) {
                        ch.write(b);
                    }
                    if (ending.equals("shutout-close")) {
                        ch.shutdownOutput();
                    }
                    ch.close();
                    wrote.complete(null);
                } catch (Throwable e) {
                    wrote.completeExceptionally(e);
                }
            }, "writer");
            writer.setDaemon(true);
            writer.start();
            try (SocketChannel reader = server.accept()) {
                readSlowly(reader, data, null);
            }
            wrote.get(ShmNio.TIMEOUT_SECONDS, TimeUnit.SECONDS);
        }
    }

    /**
     * SIGKILL of the writer right after its write returned, while the slow reader has most bytes still to read.
     * Not the same outcome: the kernel holds a TCP socket's bytes and delivers them after the process is gone;
     * on shm the bytes that had reached the reader's ring are read, in order, then the reset, and the bytes still
     * staged in the dead process are lost (docs/compatibility.md, "Close, exit and crash").
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"tcp", "shm"})
    void killedWriter(String transport) throws Exception {
        byte[] expected = NioPeerMain.pattern(MB3, 5);
        try (ServerSocketChannel server = provider(transport).openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (Child writer = writer(transport, server, MB3, "hang");
                 SocketChannel reader = server.accept()) {
                ByteBuffer b = ByteBuffer.allocate(READ_CHUNK);
                CRC32 crc = new CRC32();
                long total = 0;
                long atKill = -1;
                IOException failure = null;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ShmNio.TIMEOUT_SECONDS * 3);
                try {
                    int n;
                    while (true) {
                        // Killed before the last chunk is read at the latest: the writer hangs until it is.
                        if (atKill < 0 && (writer.printed("ENDING") || total >= MB3 - READ_CHUNK)) {
                            writer.awaitPrinted("ENDING");
                            writer.kill();
                            atKill = total;
                        }
                        if ((n = reader.read(b.clear())) < 0) {
                            break;
                        }
                        assertTrue(System.nanoTime() - deadline < 0, "no end in time; read " + total);
                        crc.update(b.array(), 0, n);
                        total += n;
                        Thread.sleep(READ_PAUSE_MILLIS);
                    }
                } catch (IOException e) {
                    failure = e;
                }
                assertTrue(atKill >= 0 && atKill < MB3, "the writer was killed with bytes unread (" + atKill + ")");
                assertEquals(NioPeerMain.crc(expected, 0, (int) total), crc.getValue(), "the bytes read are the "
                    + "stream's first " + total + ", in order");
                System.out.println(transport + ": writer killed when " + atKill + " bytes were read; the reader got "
                    + total + " of " + MB3 + ", then " + (failure == null ? "end of stream" : failure));
                if (transport.equals("tcp") || failure == null) {
                    // On shm too when every byte had left the dead process (its staging drained while it hung):
                    // end of stream only ever comes after the whole stream.
                    assertEquals(null, failure, "the kernel delivers a killed process's bytes, then FIN");
                    assertEquals(MB3, total, "end of stream after every byte");
                } else {
                    assertEquals("Connection reset", failure.getMessage(), "a killed shm peer with bytes staged");
                    assertFalse(failure instanceof ClosedChannelException, failure.toString());
                }
            }
        }
    }

    /**
     * SIGKILL of a writer blocked in one large write whose reader has not read yet: the write never returned, so
     * nobody can say how much of it was accepted. The kernel sends what its socket held, then FIN: the reader gets
     * a first part of the stream, then end of stream. The same on shm: bytes that write staged in the dead process
     * are lost as the bytes the kernel had not taken yet are, and end of stream follows the bytes that left.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"tcp", "shm"})
    void killedInABlockingWrite(String transport) throws Exception {
        int bytes = 32 << 20;
        byte[] expected = NioPeerMain.pattern(bytes, 5);
        try (ServerSocketChannel server = provider(transport).openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (Child writer = writer(transport, server, bytes, "hang");
                 SocketChannel reader = server.accept()) {
                // More than the reader and the writer hold between them: the write stays blocked until the kill.
                Thread.sleep(2000);
                assertFalse(writer.printed("WROTE"), "the write is still under way");
                writer.kill();
                long total = readPrefixToEnd(reader, expected);
                System.out.println(transport + ": writer killed in a blocking write of " + bytes + " bytes; the"
                    + " reader got " + total + ", then end of stream");
                assertTrue(total > 0 && total < bytes, "a first part of the stream: " + total);
                assertEquals(-1, reader.read(ByteBuffer.allocate(1)), "end of stream again");
            }
        }
    }

    /**
     * A writer of small blocking writes (8 KiB) whose reader reads nothing until the writer is gone, killed
     * (SIGKILL) or terminated (SIGTERM, its shutdown hooks run) once a write blocks: TCP's kernel delivers every
     * byte of every write that returned (and perhaps some of the blocked one), then end of stream. The same on shm,
     * where a blocking write returns only once its bytes have left the writer's process, never from its staging.
     */
    @ParameterizedTest(name = "{0}, writer JVM ended by {1}")
    @CsvSource({"tcp, SIGKILL", "shm, SIGKILL", "tcp, SIGTERM", "shm, SIGTERM"})
    void smallWritesThatReturnedAreDeliveredWhenTheWriterEnds(String transport, String signal) throws Exception {
        int bytes = 32 << 20;
        byte[] expected = NioPeerMain.pattern(bytes, 5);
        try (ServerSocketChannel server = provider(transport).openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (Child writer = writer(transport, server, bytes, "small-hang");
                 SocketChannel reader = server.accept()) {
                // Until a write blocks: the count of returned bytes stays the same for a second.
                writer.awaitPrinted("RETURNED");
                long returned = writer.lastReturned();
                long still = System.nanoTime();
                long deadline = still + ShmNio.TIMEOUT_NANOS;
                while (System.nanoTime() - still < TimeUnit.SECONDS.toNanos(1)) {
                    assertTrue(System.nanoTime() - deadline < 0, "the writes never blocked: " + returned);
                    Thread.sleep(100);
                    long now = writer.lastReturned();
                    if (now != returned) {
                        returned = now;
                        still = System.nanoTime();
                    }
                }
                assertTrue(returned < bytes, "a write is blocked: " + returned);
                if (signal.equals("SIGKILL")) {
                    writer.kill();
                } else {
                    writer.terminate();
                }
                long total = readPrefixToEnd(reader, expected);
                System.out.println(transport + ": writer of 8 KiB writes ended by " + signal + " with " + returned
                    + " bytes returned; the reader got " + total + ", then end of stream");
                assertTrue(total >= returned, "every byte of the writes that returned: " + total + " of " + returned);
            }
        }
    }

    /**
     * A process that dies (SIGKILL, {@code Runtime.halt}) with nothing of the connection left unsent or unread: the
     * kernel closes its TCP socket with a FIN, so the survivor reads every byte, then end of stream, and its first
     * write after that is accepted, a later one fails; the same on shm, where the dead process's last published
     * standing says so. With bytes it received still unread, the kernel resets instead: every byte, then
     * "Connection reset", on both.
     */
    @ParameterizedTest(name = "{0}, writer JVM {1}")
    @CsvSource({"tcp, hang", "shm, hang", "tcp, halt", "shm, halt", "tcp, hang-unread", "shm, hang-unread"})
    void deathWithNothingOutstandingIsEndOfStream(String transport, String ending) throws Exception {
        int bytes = 200_000;
        byte[] expected = NioPeerMain.pattern(bytes, 5);
        try (ServerSocketChannel server = provider(transport).openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (Child writer = writer(transport, server, bytes, ending);
                 SocketChannel reader = server.accept()) {
                ByteBuffer in = ByteBuffer.allocate(bytes + 1);
                while (in.position() < bytes) {
                    assertTrue(reader.read(in) >= 0, "end of stream after " + in.position() + " bytes");
                }
                boolean unread = ending.equals("hang-unread");
                if (unread) {
                    ByteBuffer toWriter = ByteBuffer.wrap(NioPeerMain.pattern(1000, 7));
                    while (toWriter.hasRemaining()) {
                        reader.write(toWriter);
                    }
                    writer.awaitPrinted("UNREAD");
                }
                if (ending.equals("halt")) {
                    writer.awaitExit();
                } else {
                    writer.awaitPrinted("ENDING");
                    writer.kill();
                }
                assertEquals(NioPeerMain.crc(expected, 0, bytes), NioPeerMain.crc(in.array(), 0, bytes),
                    "every byte written before the death, in order");
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ShmNio.TIMEOUT_SECONDS);
                if (unread) {
                    IOException e = assertThrows(IOException.class, () -> {
                        while (reader.read(in) == 0) {
                            assertTrue(System.nanoTime() - deadline < 0, "the read never ended");
                            Thread.sleep(1);
                        }
                    }, "bytes left unread in the dead process: a reset, never end of stream or more bytes");
                    assertEquals("Connection reset", e.getMessage());
                    return;
                }
                int n;
                while ((n = reader.read(in)) == 0) {
                    assertTrue(System.nanoTime() - deadline < 0, "the read never ended");
                    Thread.sleep(1);
                }
                assertEquals(-1, n, "end of stream after the last byte");
                assertEquals(-1, reader.read(in), "end of stream again");
                // As after a FIN: the first write is accepted; the reset it provokes fails a later one.
                assertEquals(10, reader.write(ByteBuffer.allocate(10)), "the first write after the FIN");
                IOException e = assertThrows(IOException.class, () -> {
                    while (System.nanoTime() - deadline < 0) {
                        reader.write(ByteBuffer.allocate(10));
                        Thread.sleep(1);
                    }
                }, "writes to a dead process fail");
                assertFalse(e instanceof ClosedChannelException, e.toString());
                System.out.println(transport + ", " + ending + ": end of stream, then the write failed: " + e);
            }
        }
    }

    /**
     * The endings where the kernel resets instead of closing in order: a process that exits with a socket whose
     * {@code SO_LINGER} is 0, or with bytes it received still unread. The reader gets the bytes the writer sent, then
     * "connection reset", never end of stream.
     */
    @ParameterizedTest(name = "{0}, writer JVM ends by {1}")
    @CsvSource({"tcp, linger0-exit", "tcp, unread-exit", "shm, linger0-exit", "shm, unread-exit"})
    void abortiveEndingsInAnotherJvm(String transport, String ending) throws Exception {
        int bytes = 100;
        try (ServerSocketChannel server = provider(transport).openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (Child writer = writer(transport, server, bytes, ending);
                 SocketChannel reader = server.accept()) {
                if (ending.equals("unread-exit")) {
                    ByteBuffer toWriter = ByteBuffer.wrap(NioPeerMain.pattern(1000, 7));
                    while (toWriter.hasRemaining()) {
                        reader.write(toWriter);
                    }
                }
                assertEquals(0, writer.awaitExit(), "the writer's exit status; it printed: " + writer.output());
                ByteBuffer in = ByteBuffer.allocate(bytes + 1);
                IOException e = assertThrows(IOException.class, () -> {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ShmNio.TIMEOUT_SECONDS);
                    while (System.nanoTime() - deadline < 0) {
                        if (reader.read(in) < 0) {
                            return;
                        }
                    }
                }, "the exit reset the connection (end of stream would be an orderly close)");
                assertFalse(e instanceof ClosedChannelException, e.toString());
                assertEquals(bytes, in.position(), "the bytes written before the exit arrive before the reset");
                assertEquals(NioPeerMain.crc(NioPeerMain.pattern(bytes, 5), 0, bytes),
                    NioPeerMain.crc(in.array(), 0, bytes));
            }
        }
    }

    /**
     * The exit's wait is bounded: a writer JVM whose reader never reads exits after {@code rdmanio.lingerMillis}
     * without progress, and the reader then reads what had reached it (its ring and spill), then the reset. The
     * writer is non-blocking: its writes return once staged (a blocking write returns only once its bytes left,
     * and one that cannot blocks, as on TCP), so bytes accepted and never sent remain at exit.
     */
    @Test
    void exitWithANeverReadingPeerEndsAfterTheLingerBound() throws Exception {
        try (ServerSocketChannel server = shm.provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            List<String> args = List.of(
                Integer.toString(((InetSocketAddress) server.getLocalAddress()).getPort()), Integer.toString(MB5),
                "nb-return");
            try (Child writer = Child.onShm(shm.dir, PeerJvm.rules(tmp), List.of("-Drdmanio.lingerMillis=500"),
                    args);
                 SocketChannel reader = server.accept()) {
                assertEquals(0, writer.awaitExit(), "the writer's exit status; it printed: " + writer.output());
                byte[] expected = NioPeerMain.pattern(MB5, 5);
                ByteBuffer in = ByteBuffer.allocate(MB5);
                IOException e = assertThrows(IOException.class, () -> {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ShmNio.TIMEOUT_SECONDS);
                    while (System.nanoTime() - deadline < 0) {
                        if (reader.read(in) < 0) {
                            return;
                        }
                    }
                }, "the unread rest was given up: a reset after the bytes that had arrived");
                assertTrue(in.position() > 0 && in.position() < MB5, "bytes before the reset: " + in.position());
                assertEquals(NioPeerMain.crc(expected, 0, in.position()),
                    NioPeerMain.crc(in.array(), 0, in.position()), "the bytes read are the stream's first ones");
                System.out.println("never-reading peer: the writer exited after its linger bound; the reader got "
                    + in.position() + " bytes, then " + e);
            }
        }
    }

    /**
     * The reader's side of the scenario: reads slowly (small reads with a pause after each) until end of stream;
     * every byte must arrive, in order, then -1.
     */
    /**
     * Reads {@code reader} to its end of stream (a failure fails the test), checks that what came is the first part
     * of {@code expected}, in order, and returns its length.
     */
    private static long readPrefixToEnd(SocketChannel reader, byte[] expected) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(READ_CHUNK);
        CRC32 crc = new CRC32();
        long total = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ShmNio.TIMEOUT_SECONDS * 3);
        int n;
        while ((n = reader.read(b.clear())) >= 0) {
            assertTrue(System.nanoTime() - deadline < 0, "no end in time; read " + total);
            crc.update(b.array(), 0, n);
            total += n;
        }
        assertEquals(NioPeerMain.crc(expected, 0, (int) total), crc.getValue(), "the bytes read are the stream's "
            + "first " + total + ", in order");
        return total;
    }

    private static void readSlowly(SocketChannel ch, byte[] expected, Child writer) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(READ_CHUNK);
        CRC32 crc = new CRC32();
        long total = 0;
        long whenEnding = -1;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ShmNio.TIMEOUT_SECONDS * 3);
        int n;
        try {
            while ((n = ch.read(b.clear())) >= 0) {
                assertTrue(System.nanoTime() - deadline < 0, "the stream did not end in time; read " + total
                    + " of " + expected.length + (writer == null ? "" : "; the writer printed: " + writer.output()));
                crc.update(b.array(), 0, n);
                total += n;
                if (whenEnding < 0 && writer != null && writer.printed("ENDING")) {
                    whenEnding = total;
                }
                Thread.sleep(READ_PAUSE_MILLIS);
            }
        } catch (IOException e) {
            fail("the reader failed after " + total + " of " + expected.length + " bytes: " + e
                + (writer == null ? "" : "; the writer printed: " + writer.output()), e);
        }
        assertEquals(expected.length, total, "bytes before end of stream");
        assertEquals(NioPeerMain.crc(expected, 0, expected.length), crc.getValue(), "checksum of the bytes");
        assertEquals(-1, ch.read(b.clear()), "end of stream stays");
        if (writer != null) {
            System.out.println("writer ended (" + writer.output().replace('\n', ' ') + ") when the reader had read "
                + (whenEnding < 0 ? "everything" : whenEnding + " bytes"));
        }
    }

    /** The writer's JVM: the JDK's TCP (no provider) or rdmanio on shm; its output read line by line. */
    /** The writer JVM ending by {@code ending}, connected to {@code server}: on shm, or the JDK's TCP for "tcp". */
    private static Child writer(String transport, ServerSocketChannel server, int bytes, String ending)
            throws IOException {
        List<String> args = List.of(Integer.toString(((InetSocketAddress) server.getLocalAddress()).getPort()),
            Integer.toString(bytes), ending);
        return transport.equals("shm") ? Child.onShm(shm.dir, PeerJvm.rules(tmp), List.of(), args) : Child.plain(args);
    }

    private static final class Child implements AutoCloseable {
        private final Process process;
        private final List<String> seen = Collections.synchronizedList(new ArrayList<>());
        /** Reads the process's output until it is gone. */
        private final Thread output;

        private Child(List<String> command) throws IOException {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
            Thread t = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = in.readLine()) != null) {
                        seen.add(line);
                    }
                } catch (IOException e) {
                    // the process is gone
                }
            }, "writer-output");
            t.setDaemon(true);
            t.start();
            output = t;
        }

        static Child plain(List<String> args) throws IOException {
            List<String> cmd = new ArrayList<>(List.of(java(), "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), WriterEndingMain.class.getName()));
            cmd.addAll(args);
            return new Child(cmd);
        }

        static Child onShm(Path shmDir, Path rules, List<String> jvmArgs, List<String> args) throws IOException {
            List<String> cmd = new ArrayList<>(jvmArgs);
            cmd.add(0, java());
            cmd.addAll(List.of("-Xshare:auto", "-XX:TieredStopAtLevel=1",
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
                // As the agent exports it: rdmanio's exit hook runs after the application's (hook-slow).
                "--add-exports", "java.base/jdk.internal.access=ALL-UNNAMED",
                "-Djava.nio.channels.spi.SelectorProvider=" + RdmaSelectorProvider.class.getName(),
                "-Drdmanio.rules=" + rules, "-Drdmanio.fabric=shm", "-Drdmanio.shm.dir=" + shmDir,
                "-cp", System.getProperty("java.class.path"), WriterEndingMain.class.getName()));
            cmd.addAll(args);
            return new Child(cmd);
        }

        private static String java() {
            return Path.of(System.getProperty("java.home"), "bin", "java").toString();
        }

        void kill() throws InterruptedException {
            process.destroyForcibly();
            if (!process.waitFor(ShmNio.TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                fail("a killed writer did not exit in time");
            }
        }

        /** SIGTERM: the JVM runs its shutdown hooks, then exits. */
        void terminate() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(ShmNio.TIMEOUT_SECONDS * 3, TimeUnit.SECONDS)) {
                fail("a terminated writer did not exit in time; it printed: " + output());
            }
        }

        /** The last {@code RETURNED n} the writer said, 0 before the first. */
        long lastReturned() {
            synchronized (seen) {
                for (int i = seen.size() - 1; i >= 0; i--) {
                    if (seen.get(i).startsWith("RETURNED ")) {
                        return Long.parseLong(seen.get(i).substring(9));
                    }
                }
                return 0;
            }
        }

        void awaitPrinted(String prefix) throws InterruptedException {
            long deadline = System.nanoTime() + ShmNio.TIMEOUT_NANOS;
            while (!printed(prefix)) {
                if (System.nanoTime() - deadline > 0 || !process.isAlive()) {
                    fail("the writer did not print " + prefix + "; it printed: " + output());
                }
                Thread.sleep(10);
            }
        }

        boolean printed(String prefix) {
            synchronized (seen) {
                for (String s : seen) {
                    if (s.startsWith(prefix)) {
                        return true;
                    }
                }
                return false;
            }
        }

        int awaitExit() throws InterruptedException {
            if (!process.waitFor(ShmNio.TIMEOUT_SECONDS * 3, TimeUnit.SECONDS)) {
                fail("the writer did not exit in time; it printed: " + output());
            }
            output.join(TimeUnit.SECONDS.toMillis(ShmNio.TIMEOUT_SECONDS)); // every line it printed
            return process.exitValue();
        }

        String output() {
            synchronized (seen) {
                return String.join("\n", seen);
            }
        }

        @Override
        public void close() throws InterruptedException {
            if (process.isAlive()) {
                process.destroyForcibly();
                process.waitFor(ShmNio.TIMEOUT_SECONDS, TimeUnit.SECONDS);
            }
        }
    }
}
