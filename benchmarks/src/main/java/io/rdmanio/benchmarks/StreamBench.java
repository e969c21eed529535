package io.rdmanio.benchmarks;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A one-way stream into a server that reads and discards: each operation is one blocking {@code write} of
 * {@code size} bytes, carried through to the end. Throughput in bytes per second is operations per second times
 * {@code size}; the server drains as fast as it can, so in steady state the writer is paced by the reader.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class StreamBench extends BenchBase {
    @Param({"4096", "65536", "1048576", "4194304"})
    public int size;

    private SocketChannel ch;
    private ByteBuffer out;

    @Setup(Level.Trial)
    public void connect() throws IOException {
        ch = SocketChannel.open(server.address());
        ch.write(ByteBuffer.wrap(new byte[] {EchoServer.SINK}));
        out = ByteBuffer.allocateDirect(size);
        for (int i = 0; i < size; i++) {
            out.put(i, (byte) (i * 31));
        }
    }

    @Benchmark
    public int write() throws IOException {
        out.clear();
        int n = 0;
        while (out.hasRemaining()) {
            n += ch.write(out);
        }
        return n;
    }

    @TearDown(Level.Trial)
    public void disconnect() throws IOException {
        ch.close();
    }
}
