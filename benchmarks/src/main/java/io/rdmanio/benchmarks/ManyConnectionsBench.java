package io.rdmanio.benchmarks;

import java.io.EOFException;
import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
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
 * {@code connections} connections registered with one selector: each operation sends a 64-byte ping on every
 * connection and selects until every echo is back, as a server with many mostly idle clients would.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ManyConnectionsBench extends BenchBase {
    private static final int PING = 64;

    @Param({"1000"})
    public int connections;

    private Selector selector;
    private SocketChannel[] channels;
    private ByteBuffer[] outs;
    private ByteBuffer[] ins;

    @Setup(Level.Trial)
    public void connect() throws IOException {
        selector = Selector.open();
        channels = new SocketChannel[connections];
        outs = new ByteBuffer[connections];
        ins = new ByteBuffer[connections];
        ByteBuffer mode = ByteBuffer.allocate(1);
        for (int i = 0; i < connections; i++) {
            SocketChannel ch = SocketChannel.open(server.address());
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ch.write(mode.clear().put(0, EchoServer.ECHO));
            ch.configureBlocking(false);
            channels[i] = ch;
            outs[i] = ByteBuffer.allocateDirect(PING);
            ins[i] = ByteBuffer.allocateDirect(PING);
            ch.register(selector, SelectionKey.OP_READ, i);
        }
    }

    @Benchmark
    public int pingAll() throws IOException {
        long t0 = System.nanoTime();
        int pending = connections;
        for (int i = 0; i < connections; i++) {
            outs[i].clear();
            ins[i].clear();
            channels[i].write(outs[i]);
            if (outs[i].hasRemaining()) {
                channels[i].keyFor(selector).interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
            }
        }
        while (pending > 0) {
            selector.select();
            Iterator<SelectionKey> it = selector.selectedKeys().iterator();
            while (it.hasNext()) {
                SelectionKey k = it.next();
                it.remove();
                int i = (Integer) k.attachment();
                SocketChannel ch = channels[i];
                if (k.isWritable()) {
                    ch.write(outs[i]);
                    if (!outs[i].hasRemaining()) {
                        k.interestOps(SelectionKey.OP_READ);
                    }
                }
                if (k.isReadable() && ins[i].hasRemaining()) {
                    if (ch.read(ins[i]) < 0) {
                        throw new EOFException("connection " + i + " closed by the echo server");
                    }
                    if (!ins[i].hasRemaining()) {
                        pending--;
                    }
                }
            }
        }
        record(t0);
        return pending;
    }

    @TearDown(Level.Trial)
    public void disconnect() throws IOException {
        for (SocketChannel ch : channels) {
            if (ch != null) {
                ch.close();
            }
        }
        selector.close();
    }
}
