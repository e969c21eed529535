package io.rdmanio.examples.hadoop;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapred.IFile;
import org.apache.hadoop.mapred.IndexRecord;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.ShuffleHandler;
import org.apache.hadoop.mapred.SpillRecord;
import org.apache.hadoop.mapreduce.security.TokenCache;
import org.apache.hadoop.mapreduce.security.token.JobTokenIdentifier;
import org.apache.hadoop.mapreduce.security.token.JobTokenSecretManager;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.server.api.ApplicationInitializationContext;
import org.apache.hadoop.yarn.server.api.AuxiliaryLocalPathHandler;

/**
 * The map side of a MapReduce job as a NodeManager holds it: the map outputs of {@link ShuffleJob}, written with
 * Hadoop's {@link IFile.Writer} and indexed with a {@link SpillRecord} where the NodeManager keeps them, served by
 * Hadoop's unmodified {@link ShuffleHandler}, started as the NodeManager starts an auxiliary service. Prints
 * {@code shuffle handler on 127.0.0.1:PORT} once it serves, then runs until stopped (a TERM signal ends it normally).
 *
 * <pre>java MapSide WORK_DIR MAPS REDUCES RECORDS VALUE_BYTES</pre>
 *
 * WORK_DIR gets the NodeManager's local directory ({@code nm-local}) and the job's credentials
 * ({@link ShuffleJob#TOKEN_FILE}), which the reduce side reads as a task reads the credentials it is launched with.
 */
public final class MapSide {

    private MapSide() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: MapSide WORK_DIR MAPS REDUCES RECORDS VALUE_BYTES");
            System.exit(2);
        }
        Path work = Path.of(args[0]).toAbsolutePath();
        ShuffleJob job = ShuffleJob.parse(args, 1);
        Path nmLocal = work.resolve("nm-local");
        JobConf conf = job.conf(nmLocal);
        String user = conf.getUser();

        // The job token, made as the job client makes it, stored where the reduce task finds its credentials.
        Token<JobTokenIdentifier> jobToken = new Token<>(new JobTokenIdentifier(new Text(ShuffleJob.JOB.toString())),
                new JobTokenSecretManager());
        Credentials credentials = new Credentials();
        TokenCache.setJobToken(jobToken, credentials);
        credentials.writeTokenStorageFile(new org.apache.hadoop.fs.Path(work.resolve(ShuffleJob.TOKEN_FILE).toString()),
                conf);

        // The NodeManager's layout, which ShuffleHandler reads:
        // <local-dir>/usercache/<user>/appcache/<application>/output/<map attempt>/file.out(.index)
        Path output = nmLocal.resolve("usercache").resolve(user).resolve("appcache")
                .resolve(ShuffleJob.APPLICATION.toString()).resolve("output");
        long bytes = 0;
        for (int m = 0; m < job.maps(); m++) {
            bytes += writeMapOutput(job, conf, m, output.resolve(ShuffleJob.mapAttempt(m).toString()));
        }

        ShuffleHandler handler = new ShuffleHandler();
        handler.setAuxiliaryLocalPathHandler(new LocalDir(nmLocal));
        conf.setInt(ShuffleHandler.SHUFFLE_PORT_CONFIG_KEY, 0);
        handler.init(conf);
        handler.start();
        handler.initializeApplication(new ApplicationInitializationContext(user, ShuffleJob.APPLICATION,
                ShuffleHandler.serializeServiceData(jobToken)));
        int port = ShuffleHandler.deserializeMetaData(handler.getMetaData());
        System.out.println("map outputs: " + job.maps() + " maps x " + job.reduces() + " reduces, "
                + bytes + " bytes in IFile");
        System.out.println("shuffle handler on 127.0.0.1:" + port);
        System.out.flush();

        // Runs until stopped, as a NodeManager does; the service stops with the JVM.
        Runtime.getRuntime().addShutdownHook(new Thread(handler::stop, "shuffle-handler-stop"));
        new CountDownLatch(1).await();
    }

    /** Writes one map's output, all reduces' partitions in one file, as a map task's final spill does. */
    private static long writeMapOutput(ShuffleJob job, JobConf conf, int map, Path attemptDir) throws IOException {
        Files.createDirectories(attemptDir);
        FileSystem local = FileSystem.getLocal(conf).getRaw();
        org.apache.hadoop.fs.Path data = new org.apache.hadoop.fs.Path(attemptDir.resolve("file.out").toString());
        SpillRecord index = new SpillRecord(job.reduces());
        try (FSDataOutputStream out = local.create(data, true)) {
            BytesWritable key = new BytesWritable();
            BytesWritable value = new BytesWritable();
            for (int r = 0; r < job.reduces(); r++) {
                long start = out.getPos();
                IFile.Writer<BytesWritable, BytesWritable> writer =
                        new IFile.Writer<>(conf, out, BytesWritable.class, BytesWritable.class, null, null);
                for (int i = 0; i < job.recordsPerPartition(); i++) {
                    byte[] k = ShuffleJob.key(i, map);
                    byte[] v = job.value(map, r, i);
                    key.set(k, 0, k.length);
                    value.set(v, 0, v.length);
                    writer.append(key, value);
                }
                writer.close();
                index.putIndex(new IndexRecord(start, writer.getRawLength(), writer.getCompressedLength()), r);
            }
        }
        index.writeToFile(new org.apache.hadoop.fs.Path(attemptDir.resolve("file.out.index").toString()), conf);
        return Files.size(attemptDir.resolve("file.out"));
    }

    /** The NodeManager's local directories, here one: a path is found under it or not at all. */
    private static final class LocalDir implements AuxiliaryLocalPathHandler {
        private final Path root;

        LocalDir(Path root) {
            this.root = root;
        }

        @Override
        public org.apache.hadoop.fs.Path getLocalPathForRead(String path) throws IOException {
            Path p = root.resolve(path);
            if (!Files.exists(p)) {
                throw new IOException("no " + path + " under " + root);
            }
            return new org.apache.hadoop.fs.Path(p.toString());
        }

        @Override
        public org.apache.hadoop.fs.Path getLocalPathForWrite(String path) {
            return new org.apache.hadoop.fs.Path(root.resolve(path).toString());
        }

        @Override
        public org.apache.hadoop.fs.Path getLocalPathForWrite(String path, long size) {
            return getLocalPathForWrite(path);
        }

        @Override
        public Iterable<org.apache.hadoop.fs.Path> getAllLocalPathsForRead(String path) {
            List<org.apache.hadoop.fs.Path> paths = new ArrayList<>();
            if (Files.exists(root.resolve(path))) {
                paths.add(new org.apache.hadoop.fs.Path(root.resolve(path).toString()));
            }
            return paths;
        }
    }
}
