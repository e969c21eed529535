package io.rdmanio.examples.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hadoop's MapReduce shuffle, unmodified, across two JVMs: the NodeManager's ShuffleHandler (Netty 4 on NIO) serving
 * map outputs written with IFile, and a reduce task's {@code Shuffle} fetching them with {@code HttpURLConnection}
 * (java.net) and merging them. With only the agent flag on both sides every connection is carried by the shm fabric
 * and every merged record arrives as the maps wrote it; on the JDK's TCP, the same records (the reference).
 */
class HadoopShuffleTest {

    private static final ShuffleJob JOB = new ShuffleJob(4, 3, 2000, 200);
    /** ShuffleHandler binds the wildcard address ({@code new InetSocketAddress(port)}): a rule for 0.0.0.0 names it. */
    private static final String RULES = "bind 0.0.0.0 *\nconnect 127.0.0.1 *\n";

    @BeforeEach
    void hadoopRunsOnThisJdk() {
        // Hadoop 3.4's UserGroupInformation.getCurrentUser calls Subject.getSubject, which throws from JDK 23 on
        // (unless the Security Manager is allowed, which JDK 24 removed): HADOOP-19212, fixed after 3.4.
        Assumptions.assumeTrue(Runtime.version().feature() < 23, "Hadoop 3.4 does not run on JDK "
                + Runtime.version().feature() + ": Subject.getSubject is not supported (HADOOP-19212)");
    }

    @Test
    void everyRecordArrivesOverShmWithOnlyTheAgentFlag(@TempDir Path work) throws Exception {
        Path rules = Files.writeString(work.resolve("rules"), RULES);
        String agent = "rules=" + rules + ",fabric=shm,stats=";
        String summary = shuffle(work, agent + work.resolve("map.json"), agent + work.resolve("reduce.json"));
        assertEquals(expectedSummary(), summary);
        for (String side : new String[] {"map.json", "reduce.json"}) {
            assertTrue(connections(work.resolve(side), "rdma") > 0, side + ": no fabric connection");
            assertEquals(0, connections(work.resolve(side), "tcp"), side + ": a connection took TCP");
        }
    }

    @Test
    void theSameRecordsOnTcpWithoutTheAgent(@TempDir Path work) throws Exception {
        assertEquals(expectedSummary(), shuffle(work, null, null));
    }

    private static String expectedSummary() {
        return "shuffle: " + JOB.maps() + " maps x " + JOB.reduces() + " reduces, "
                + JOB.reduces() * JOB.recordsPerReduce() + " records checked";
    }

    /** Runs the map side and then the reduce side; returns the reduce side's summary up to the byte count. */
    private static String shuffle(Path work, String mapAgent, String reduceAgent) throws Exception {
        String[] shape = JOB.args();
        String[] mapArgs = new String[shape.length + 1];
        mapArgs[0] = work.toString();
        System.arraycopy(shape, 0, mapArgs, 1, shape.length);
        ShuffleJvm map = ShuffleJvm.start(work, "map", mapAgent, MapSide.class, mapArgs);
        try {
            String port = map.awaitLine("^shuffle handler on 127\\.0\\.0\\.1:(\\d+)$");
            String[] reduceArgs = new String[shape.length + 2];
            reduceArgs[0] = work.toString();
            reduceArgs[1] = port;
            System.arraycopy(shape, 0, reduceArgs, 2, shape.length);
            String out = ShuffleJvm.start(work, "reduce", reduceAgent, ReduceSide.class, reduceArgs).await();
            map.stop();
            Matcher m = Pattern.compile("^(shuffle: .* records checked),", Pattern.MULTILINE).matcher(out);
            assertTrue(m.find(), "no summary in " + out);
            return m.group(1);
        } finally {
            map.kill();
        }
    }

    private static long connections(Path stats, String transport) throws IOException {
        assertTrue(Files.isRegularFile(stats), "no stats file " + stats);
        Matcher m = Pattern.compile("\"connections\": \\{\\s*\"rdma\": (\\d+),\\s*\"tcp\": (\\d+)")
                .matcher(Files.readString(stats));
        assertTrue(m.find(), "no connections in " + stats);
        return Long.parseLong(m.group(transport.equals("rdma") ? 1 : 2));
    }
}
