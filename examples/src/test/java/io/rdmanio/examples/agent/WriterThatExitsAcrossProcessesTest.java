package io.rdmanio.examples.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two processes, as a user runs them: a writer makes 2,000 writes of 10 bytes and exits (with or without closing),
 * while its reader reads nothing until the writer has exited. On the JDK the writer's bytes wait in the kernel's
 * buffers, so it exits at once and the reader's first read takes every byte; the same must hold over shm, where
 * one frame per write would fill the reader's 32 receive slots with 320 bytes and leave the writer blocked for as
 * long as its reader does not read: a parent that reads its child's output once the child has exited would wait
 * forever.
 */
class WriterThatExitsAcrossProcessesTest {

    private static final int PIECES = 2_000;
    /** The writer's bound: the JDK's takes well under a second after it started. */
    private static final long WRITER_SECONDS = 60;

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"exit", "close"})
    void theWriterExitsAndTheLateReaderTakesEveryByte(String ending) throws Exception {
        assertTheSameOnTheJdkAndOverShm("first read " + PIECES * 10 + "\n" + wholeStream(PIECES * 10), ending, PIECES,
                10);
    }

    /**
     * One write of 3 MB, more than shm's receive ring (2 MiB) and less than what the kernel holds for a TCP reader
     * that does not read (about 4 MB here): the JDK's writer exits at once, and so must the fabric's (its reader's
     * engine spills the full ring); before, it lingered until the linger bound reset the connection. The first
     * read's size is the kernel's affair for so much (what the dead writer's socket had not yet passed on), so only
     * the whole stream is compared.
     */
    @ParameterizedTest
    @ValueSource(strings = {"exit", "close"})
    void aWriterOfMoreThanTheRingExitsAndTheLateReaderTakesEveryByte(String ending) throws Exception {
        assertTheSameOnTheJdkAndOverShm(wholeStream(3_000_000), ending, 1, 3_000_000);
    }

    /** What the reader prints of a whole stream of {@code n} bytes of {@link SlowReaderMain#pattern}. */
    private static String wholeStream(int n) {
        CRC32 crc = new CRC32();
        crc.update(SlowReaderMain.pattern(n));
        return "total " + n + " crc " + Long.toHexString(crc.getValue()) + " then end of stream\n";
    }

    /** The scenario on the JDK, then over shm: the reader prints {@code expected} on both. */
    private void assertTheSameOnTheJdkAndOverShm(String expected, String ending, int pieces, int size)
            throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/dev/shm")) && Files.isWritable(Path.of("/dev/shm")),
                "needs a writable /dev/shm");
        Path rules = dir.resolve("local.rules");
        Files.writeString(rules, "bind 127.0.0.1 *\nconnect 127.0.0.1 *\n");
        assertEquals(expected, run("jdk", "-", ending, pieces, size), "the JDK's own run");
        assertEquals(expected, run("shm", "rules=" + rules + ",fabric=shm", ending, pieces, size), "over shm");
    }

    private String run(String name, String agentOptions, String ending, int pieces, int size) throws Exception {
        String label = name + "-" + ending + "-" + size;
        Path go = dir.resolve(label + ".go");
        AgentJvm.Child reader = AgentJvm.start(dir, label + "-reader", agentOptions,
                SlowReaderMain.class, go.toString(), Integer.toString(pieces * size + 1));
        try {
            String port = reader.awaitLine("^listening (\\d+)$");
            AgentJvm.Child writer = AgentJvm.start(dir, label + "-writer", agentOptions,
                    SmallWritesThenExitMain.class, "127.0.0.1", port, Integer.toString(pieces), ending,
                    Integer.toString(size));
            boolean exited = writer.process().waitFor(WRITER_SECONDS, TimeUnit.SECONDS);
            String wrote = writer.stdoutSoFar();
            if (!exited) {
                writer.stop();
            }
            assertTrue(exited, () -> name + ": the writer did not exit within " + WRITER_SECONDS
                    + " s while its reader was not reading; it printed: " + wrote);
            assertEquals("wrote " + pieces * size + "\n", wrote, name + ": the writer");
            Files.createFile(go);
            AgentJvm.Outcome read = reader.await();
            assertEquals(0, read.exitCode(), read::describe);
            String out = read.stdout().replaceFirst("^listening \\d+\n", "");
            return pieces == 1 ? out.replaceFirst("^first read \\d+\n", "") : out;
        } finally {
            if (reader.process().isAlive()) {
                reader.stop();
            }
        }
    }
}
