package io.rdmanio.selector.shm;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32;

/**
 * A plain java.nio peer for the cross-process tests, driven line by line on stdin, answering on stdout. It knows
 * nothing of rdmanio: the JVM it runs in is activated by system property. It holds one listener and one
 * connection at a time, in blocking mode.
 *
 * <pre>
 * listen               -> PORT p            bind 127.0.0.1:0
 * accept               -> ACCEPTED
 * connect p            -> CONNECTED         (or CONNECT-FAILED exception)
 * write n seed         -> WROTE n           the pattern of pattern
 * read n               -> READ n crc        exactly n bytes (fewer at end of stream)
 * readall              -> EOF n crc         until end of stream
 * shutout              -> SHUT              shutdownOutput
 * close                -> CLOSED
 * reset                -> RESET             SO_LINGER 0, then close
 * stream               -> STREAMING         a thread writes until it fails
 * serve                -> SERVING           a thread accepts, echoes one byte, reads to end, closes, repeatedly
 *                                           (SERVE-FAILED exception for a connection that fails)
 * connectloop p        -> LOOPING           a thread connects, writes a byte, closes, repeatedly
 * fds                  -> FDS n             open descriptors of this process
 * exit                                      exit 0
 * </pre>
 * Any failure prints {@code ERROR exception} and the peer carries on.
 */
public final class NioPeerMain {

    private static final PrintStream OUT = System.out;

    private ServerSocketChannel server;
    private SocketChannel ch;

    public static void main(String[] args) throws Exception {
        OUT.println("PROVIDER " + SelectorProvider.provider().getClass().getName());
        OUT.flush();
        new NioPeerMain().run();
    }

    private void run() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split("\\s+");
            try {
                if (!command(w)) {
                    break;
                }
            } catch (Exception e) {
                say("ERROR " + e);
            }
        }
        System.exit(0);
    }

    private static void say(String s) {
        synchronized (OUT) {
            OUT.println(s);
            OUT.flush();
        }
    }

    private boolean command(String[] w) throws Exception {
        switch (w[0]) {
            case "listen":
                server = ServerSocketChannel.open();
                server.bind(new InetSocketAddress("127.0.0.1", 0));
                say("PORT " + ((InetSocketAddress) server.getLocalAddress()).getPort());
                return true;
            case "accept":
                ch = server.accept();
                say("ACCEPTED");
                return true;
            case "connect":
                try {
                    ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", Integer.parseInt(w[1])));
                    say("CONNECTED");
                } catch (IOException e) {
                    say("CONNECT-FAILED " + e);
                }
                return true;
            case "write": {
                byte[] data = pattern(Integer.parseInt(w[1]), Integer.parseInt(w[2]));
                ByteBuffer b = ByteBuffer.wrap(data);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                say("WROTE " + data.length);
                return true;
            }
            case "read": {
                ByteBuffer b = ByteBuffer.allocate(Integer.parseInt(w[1]));
                while (b.hasRemaining() && ch.read(b) >= 0) {
                    // until full or end of stream
                }
                CRC32 crc = new CRC32();
                crc.update(b.array(), 0, b.position());
                say("READ " + b.position() + " " + crc.getValue());
                return true;
            }
            case "readall": {
                ByteBuffer b = ByteBuffer.allocate(64 * 1024);
                CRC32 crc = new CRC32();
                long n = 0;
                int k;
                while ((k = ch.read(b.clear())) >= 0) {
                    crc.update(b.array(), 0, k);
                    n += k;
                }
                say("EOF " + n + " " + crc.getValue());
                return true;
            }
            case "shutout":
                ch.shutdownOutput();
                say("SHUT");
                return true;
            case "close":
                ch.close();
                say("CLOSED");
                return true;
            case "reset":
                ch.setOption(StandardSocketOptions.SO_LINGER, 0);
                ch.close();
                say("RESET");
                return true;
            case "stream":
                background("stream", () -> {
                    ByteBuffer b = ByteBuffer.wrap(pattern(256 * 1024, 3));
                    while (true) {
                        ch.write(b.clear());
                    }
                });
                say("STREAMING");
                return true;
            case "serve":
                background("serve", () -> {
                    ByteBuffer one = ByteBuffer.allocate(1);
                    ByteBuffer rest = ByteBuffer.allocate(64);
                    long served = 0;
                    while (true) {
                        try (SocketChannel c = server.accept()) {
                            served++;
                            one.clear();
                            while (one.hasRemaining() && c.read(one) >= 0) {
                                // one byte
                            }
                            c.write(one.flip());
                            while (c.read(rest.clear()) >= 0) {
                                // until the client closes
                            }
                        } catch (IOException e) {
                            // One connection's failure is reported; the server carries on with the next.
                            say("SERVE-FAILED connection " + served + ": " + e);
                        }
                    }
                });
                say("SERVING");
                return true;
            case "connectloop": {
                int port = Integer.parseInt(w[1]);
                background("connectloop", () -> {
                    while (true) {
                        try (SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", port))) {
                            c.write(ByteBuffer.wrap(new byte[] {7}));
                        } catch (IOException e) {
                            // a refused connect is one of the outcomes the survivor is tested against
                        }
                    }
                });
                say("LOOPING");
                return true;
            }
            case "fds":
                try (var s = Files.list(Path.of("/proc/self/fd"))) {
                    say("FDS " + s.count());
                }
                return true;
            case "exit":
                return false;
            default:
                say("ERROR unknown command " + w[0]);
                return true;
        }
    }

    /** A deterministic byte pattern of {@code n} bytes, the same in every JVM. */
    static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        int x = seed * 31 + 7;
        for (int i = 0; i < n; i++) {
            x = x * 1103515245 + 12345;
            b[i] = (byte) (x >>> 16);
        }
        return b;
    }

    static long crc(byte[] b, int off, int len) {
        CRC32 crc = new CRC32();
        crc.update(b, off, len);
        return crc.getValue();
    }

    private interface Body {
        void run() throws Exception;
    }

    private static void background(String name, Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Exception e) {
                say("ENDED " + name + " " + e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
    }
}
