package io.rdmanio.benchmarks;

import java.io.EOFException;
import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
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
 * Round trip of one message through an echo server, as an ordinary NIO client writes it: {@code selector} is a
 * non-blocking channel driven by a selector (write, select, read, until the whole echo is back), {@code blocking}
 * a blocking channel (write it all, read it all). Each operation's time also goes into the HdrHistogram.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class RoundTripBench extends BenchBase {
    @Param({"64", "512", "4096", "16384", "65536"})
    public int size;

    @Param({"selector", "blocking"})
    public String io;

    private SocketChannel ch;
    private Selector selector;
    private SelectionKey key;
    private ByteBuffer out;
    private ByteBuffer in;

    @Setup(Level.Trial)
    public void connect() throws IOException {
        ch = SocketChannel.open(server.address());
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.write(ByteBuffer.wrap(new byte[] {EchoServer.ECHO}));
        out = ByteBuffer.allocateDirect(size);
        for (int i = 0; i < size; i++) {
            out.put(i, (byte) i);
        }
        in = ByteBuffer.allocateDirect(size);
        if (io.equals("selector")) {
            ch.configureBlocking(false);
            selector = Selector.open();
            key = ch.register(selector, SelectionKey.OP_READ);
        } else if (!io.equals("blocking")) {
            throw new IllegalArgumentException("io must be selector or blocking: " + io);
        }
    }

    @Benchmark
    public int roundTrip() throws IOException {
        long t0 = System.nanoTime();
        out.clear();
        in.clear();
        if (selector == null) {
            while (out.hasRemaining()) {
                ch.write(out);
            }
            while (in.hasRemaining()) {
                if (ch.read(in) < 0) {
                    throw new EOFException("echo server closed the connection");
                }
            }
        } else {
            ch.write(out);
            while (in.hasRemaining()) {
                int ops = out.hasRemaining() ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ;
                if (key.interestOps() != ops) {
                    key.interestOps(ops);
                }
                selector.select();
                selector.selectedKeys().clear();
                if (out.hasRemaining()) {
                    ch.write(out);
                }
                if (ch.read(in) < 0) {
                    throw new EOFException("echo server closed the connection");
                }
            }
        }
        record(t0);
        return in.get(size - 1);
    }

    @TearDown(Level.Trial)
    public void disconnect() throws IOException {
        if (selector != null) {
            selector.close();
        }
        ch.close();
    }
}
