package io.rdmanio.examples.hadoop;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalDirAllocator;
import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.mapred.Counters;
import org.apache.hadoop.mapred.InputSplit;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.MROutputFiles;
import org.apache.hadoop.mapred.RawKeyValueIterator;
import org.apache.hadoop.mapred.ReduceTask;
import org.apache.hadoop.mapred.Reporter;
import org.apache.hadoop.mapred.ShuffleConsumerPlugin;
import org.apache.hadoop.mapred.TaskAttemptID;
import org.apache.hadoop.mapred.TaskStatus;
import org.apache.hadoop.mapreduce.MRConfig;
import org.apache.hadoop.mapreduce.security.TokenCache;
import org.apache.hadoop.mapreduce.security.token.JobTokenIdentifier;
import org.apache.hadoop.mapreduce.security.token.JobTokenSecretManager;
import org.apache.hadoop.mapreduce.task.reduce.Shuffle;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.util.Progress;

/**
 * The reduce side of {@link ShuffleJob}: each reduce task's shuffle, run as a reduce task runs it, by Hadoop's
 * unmodified {@link Shuffle} (the default {@link ShuffleConsumerPlugin}, with its event fetcher, its {@code Fetcher}
 * threads over {@code HttpURLConnection}, and {@code MergeManagerImpl}), fetching from the ShuffleHandler of
 * {@link MapSide}. Every merged record is checked: the count, the order, and each key's and value's bytes. Prints
 * one line per reduce and a summary; exits 1 at the first wrong record or failed shuffle.
 *
 * <pre>java ReduceSide WORK_DIR SHUFFLE_PORT MAPS REDUCES RECORDS VALUE_BYTES</pre>
 *
 * WORK_DIR is the map side's (for the job's credentials); each reduce gets its own local directory under it.
 */
public final class ReduceSide {

    private ReduceSide() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: ReduceSide WORK_DIR SHUFFLE_PORT MAPS REDUCES RECORDS VALUE_BYTES");
            System.exit(2);
        }
        Path work = Path.of(args[0]).toAbsolutePath();
        String shuffleUrl = "http://127.0.0.1:" + Integer.parseInt(args[1]);
        ShuffleJob job = ShuffleJob.parse(args, 2);

        long records = 0;
        long bytes = 0;
        long fetchNanos = 0;
        for (int r = 0; r < job.reduces(); r++) {
            Outcome o = shuffle(job, r, work, shuffleUrl);
            System.out.printf(Locale.ROOT, "reduce %d: %d records merged and checked, %d bytes fetched in %.1f ms%n",
                    r, o.records, o.bytes, o.fetchNanos / 1e6);
            records += o.records;
            bytes += o.bytes;
            fetchNanos += o.fetchNanos;
        }
        System.out.printf(Locale.ROOT, "shuffle: %d maps x %d reduces, %d records checked, %d bytes fetched in %.1f ms"
                + " (%.1f MB/s)%n", job.maps(), job.reduces(), records, bytes, fetchNanos / 1e6,
                bytes / (fetchNanos / 1e9) / 1e6);
    }

    private record Outcome(long records, long bytes, long fetchNanos) {
    }

    /** Runs one reduce task's shuffle and checks its merged input. */
    private static Outcome shuffle(ShuffleJob job, int reduce, Path work, String shuffleUrl) throws Exception {
        TaskAttemptID reduceId = ShuffleJob.reduceAttempt(reduce);
        Path localDir = Files.createDirectories(work.resolve("reduce-local-" + reduce));
        JobConf conf = job.conf(localDir);

        // The credentials the task is launched with; the shuffle secret is the job token's, as YarnChild takes it
        // when the job has no separate shuffle key.
        Credentials credentials = Credentials.readTokenStorageFile(
                new org.apache.hadoop.fs.Path(work.resolve(ShuffleJob.TOKEN_FILE).toString()), conf);
        Token<JobTokenIdentifier> jobToken = TokenCache.getJobToken(credentials);
        ReduceTask task = new ReduceTask(localDir.resolve("job.xml").toString(), reduceId, reduce, job.maps(), 1);
        task.setShuffleSecret(JobTokenSecretManager.createSecretKey(jobToken.getPassword()));

        MapsDone umbilical = new MapsDone(job.maps(), shuffleUrl);
        Progress progress = new Progress();
        Progress copyPhase = progress.addPhase("copy");
        Progress mergePhase = progress.addPhase("sort");
        Counters.Counter shuffledBytes = new Counters.Counter();
        MROutputFiles mapOutputFile = new MROutputFiles();
        mapOutputFile.setConf(conf);
        ShuffleConsumerPlugin.Context<BytesWritable, BytesWritable> context = new ShuffleConsumerPlugin.Context<>(
                reduceId, conf, FileSystem.getLocal(conf), umbilical.umbilical(),
                new LocalDirAllocator(MRConfig.LOCAL_DIR),
                new TaskReporter(), null, null, null, new Counters.Counter(), new Counters.Counter(),
                new Counters.Counter(), shuffledBytes, new Counters.Counter(), new Counters.Counter(),
                new ReduceStatus(reduceId), copyPhase, mergePhase, task, mapOutputFile, null);

        Shuffle<BytesWritable, BytesWritable> shuffle = new Shuffle<>();
        shuffle.init(context);
        long start = System.nanoTime();
        RawKeyValueIterator merged = shuffle.run();
        long fetchNanos = umbilical.firstStatusNanos() - start;
        if (!umbilical.errors().isEmpty()) {
            throw new IOException("reduce " + reduce + ": the shuffle reported " + umbilical.errors());
        }
        long records = check(job, reduce, merged);
        merged.close();
        shuffle.close();
        return new Outcome(records, shuffledBytes.getValue(), fetchNanos);
    }

    /**
     * Checks that {@code merged} holds exactly the records every map wrote for {@code reduce}, in the order of the
     * job's key comparator: sequence number, then map.
     */
    private static long check(ShuffleJob job, int reduce, RawKeyValueIterator merged) throws IOException {
        BytesWritable key = new BytesWritable();
        BytesWritable value = new BytesWritable();
        long n = 0;
        while (merged.next()) {
            int sequence = (int) (n / job.maps());
            int map = (int) (n % job.maps());
            if (n >= job.recordsPerReduce()) {
                throw new IOException("reduce " + reduce + ": more than the " + job.recordsPerReduce() + " records");
            }
            key.readFields(merged.getKey());
            value.readFields(merged.getValue());
            byte[] expectedKey = ShuffleJob.key(sequence, map);
            if (!Arrays.equals(key.getBytes(), 0, key.getLength(), expectedKey, 0, expectedKey.length)) {
                throw new IOException("reduce " + reduce + ": record " + n + " has key "
                        + HexFormat.of().formatHex(key.copyBytes()) + ", expected "
                        + HexFormat.of().formatHex(expectedKey));
            }
            byte[] expectedValue = job.value(map, reduce, sequence);
            if (!Arrays.equals(value.getBytes(), 0, value.getLength(), expectedValue, 0, expectedValue.length)) {
                throw new IOException("reduce " + reduce + ": record " + n + " (map " + map + ", sequence "
                        + sequence + ") has a " + value.getLength() + "-byte value that differs from the "
                        + expectedValue.length + " bytes the map wrote");
            }
            n++;
        }
        if (n != job.recordsPerReduce()) {
            throw new IOException("reduce " + reduce + ": " + n + " records, expected " + job.recordsPerReduce());
        }
        return n;
    }

    /**
     * The task's reporter, with counters: the fetchers count their errors in it ({@code Reporter.NULL} has none, and
     * a fetcher's first I/O error would end in a NullPointerException instead of a retry).
     */
    private static final class TaskReporter implements Reporter {
        private final Counters counters = new Counters();

        @Override
        public void setStatus(String status) {
        }

        @Override
        public Counters.Counter getCounter(Enum<?> name) {
            return counters.findCounter(name);
        }

        @Override
        public Counters.Counter getCounter(String group, String name) {
            return counters.findCounter(group, name);
        }

        @Override
        public void incrCounter(Enum<?> key, long amount) {
            counters.incrCounter(key, amount);
        }

        @Override
        public void incrCounter(String group, String counter, long amount) {
            counters.incrCounter(group, counter, amount);
        }

        @Override
        public InputSplit getInputSplit() {
            throw new UnsupportedOperationException("a reduce task has no input split");
        }

        @Override
        public float getProgress() {
            return 0;
        }

        @Override
        public void progress() {
        }
    }

    /** The reduce task's status, as the task keeps it for its ApplicationMaster; no fetch failure is expected. */
    private static final class ReduceStatus extends TaskStatus {
        ReduceStatus(TaskAttemptID id) {
            super(id, 0f, 1, State.RUNNING, "", "", "", Phase.SHUFFLE, new Counters());
        }

        @Override
        public boolean getIsMap() {
            return false;
        }

        @Override
        public void addFetchFailedMap(TaskAttemptID mapTaskId) {
            throw new IllegalStateException("a fetch from " + mapTaskId + " failed");
        }
    }
}
