package io.rdmanio.benchmarks;

import java.io.IOException;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;

/**
 * Connection setup: open and connect a socket, send one byte, wait for the server's one-byte answer (so the
 * accept has really happened on the other side), and close; the server closes when it reads the end of stream. Allocation here is expected:
 * a connection is a new channel.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ConnectBench extends BenchBase {
    private final ByteBuffer hello = ByteBuffer.allocateDirect(1);
    private final ByteBuffer answer = ByteBuffer.allocateDirect(2);

    @Benchmark
    public int connectAcceptClose() throws IOException {
        long t0 = System.nanoTime();
        int got;
        try (SocketChannel ch = SocketChannel.open(server.address())) {
            hello.clear();
            hello.put(0, EchoServer.CONNECT);
            ch.write(hello);
            answer.clear();
            while (answer.position() == 0) {
                if (ch.read(answer) < 0) {
                    throw new ProtocolException("the server closed before it answered");
                }
            }
            got = answer.get(0);
            // The client closes first, as most clients do (the try's close).
        }
        record(t0);
        return got;
    }
}
