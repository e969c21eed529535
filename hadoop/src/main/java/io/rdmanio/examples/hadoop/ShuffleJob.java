package io.rdmanio.examples.hadoop;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.JobID;
import org.apache.hadoop.mapred.TaskAttemptID;
import org.apache.hadoop.mapred.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.yarn.api.records.ApplicationId;

/**
 * The one job both sides of the shuffle agree on: its ids, its shape (maps, reduces, records per map and reduce,
 * value sizes) and its records, generated from seeds so that the map side can write them and the reduce side can
 * check every merged record without anything passing between them but the shuffle itself.
 *
 * <p>A record of map {@code m} for reduce {@code r} with sequence number {@code i} has an 8-byte key, {@code i}
 * then {@code m} as big-endian ints, so that Hadoop's raw {@link BytesWritable} order (length, then unsigned bytes)
 * sorts a reduce's merged input by {@code i} then {@code m}; its value is {@code 1..2*meanValueBytes} bytes drawn
 * from a generator seeded by {@code (m, r, i)}. Immutable.
 */
public record ShuffleJob(int maps, int reduces, int recordsPerPartition, int meanValueBytes) {

    /** The cluster timestamp of the application whose job this is (any fixed value: it only names directories). */
    static final long CLUSTER_TIMESTAMP = 1_764_000_000_000L;
    static final ApplicationId APPLICATION = ApplicationId.newInstance(CLUSTER_TIMESTAMP, 1);
    /** The job id the NodeManager's ShuffleHandler derives from the application id. */
    static final JobID JOB = new JobID(Long.toString(CLUSTER_TIMESTAMP), APPLICATION.getId());
    static final String TOKEN_FILE = "job.token";

    public ShuffleJob {
        if (maps < 1 || reduces < 1 || recordsPerPartition < 1 || meanValueBytes < 1) {
            throw new IllegalArgumentException("maps, reduces, records and value bytes must be positive");
        }
    }

    /** Reads {@code MAPS REDUCES RECORDS VALUE_BYTES} from {@code args[from..from+3]}. */
    static ShuffleJob parse(String[] args, int from) {
        return new ShuffleJob(Integer.parseInt(args[from]), Integer.parseInt(args[from + 1]),
                Integer.parseInt(args[from + 2]), Integer.parseInt(args[from + 3]));
    }

    String[] args() {
        return new String[] {Integer.toString(maps), Integer.toString(reduces), Integer.toString(recordsPerPartition),
            Integer.toString(meanValueBytes)};
    }

    static TaskAttemptID mapAttempt(int map) {
        return new TaskAttemptID(new TaskID(JOB, TaskType.MAP, map), 0);
    }

    static TaskAttemptID reduceAttempt(int reduce) {
        return new TaskAttemptID(new TaskID(JOB, TaskType.REDUCE, reduce), 0);
    }

    /** The job configuration both sides run with: Hadoop's defaults, plus the job's shape and record types. */
    JobConf conf(Path localDir) {
        JobConf conf = new JobConf();
        conf.setNumMapTasks(maps);
        conf.setNumReduceTasks(reduces);
        conf.setMapOutputKeyClass(BytesWritable.class);
        conf.setMapOutputValueClass(BytesWritable.class);
        conf.setUser(System.getProperty("user.name"));
        conf.set("mapreduce.cluster.local.dir", localDir.toString());
        return conf;
    }

    static byte[] key(int sequence, int map) {
        return ByteBuffer.allocate(8).putInt(sequence).putInt(map).array();
    }

    byte[] value(int map, int reduce, int sequence) {
        SplittableRandom random = new SplittableRandom(((long) map << 48) ^ ((long) reduce << 32) ^ sequence);
        byte[] value = new byte[1 + random.nextInt(2 * meanValueBytes)];
        random.nextBytes(value);
        return value;
    }

    /** The records each reduce receives, from all maps. */
    long recordsPerReduce() {
        return (long) maps * recordsPerPartition;
    }
}
