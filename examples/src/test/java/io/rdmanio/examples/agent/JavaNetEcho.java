package io.rdmanio.examples.agent;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.zip.CRC32;

/**
 * The echo example's two ends written with java.net instead of NIO, for the mixed-API runs across two processes:
 * {@code server HOST PORT} (a thread per connection, until killed; prints the line {@code EchoServer} prints) and
 * {@code client HOST PORT COUNT [bound]} (random messages, each checked on return; prints the line
 * {@code EchoClient} prints; {@code bound}: the socket binds to HOST first). Knows nothing of rdmanio.
 */
public final class JavaNetEcho {

    private JavaNetEcho() {
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("server")) {
            serve(new InetSocketAddress(args[1], Integer.parseInt(args[2])));
        } else {
            System.out.println(client(new InetSocketAddress(args[1], Integer.parseInt(args[2])),
                Integer.parseInt(args[3]), args.length > 4 && args[4].equals("bound")));
        }
    }

    private static void serve(InetSocketAddress at) throws IOException {
        try (ServerSocket ss = new ServerSocket()) {
            ss.bind(at);
            System.out.println("echo server listening on " + ss.getLocalSocketAddress());
            for (;;) {
                Socket s = ss.accept();
                Thread t = new Thread(() -> {
                    try (s) {
                        s.getInputStream().transferTo(s.getOutputStream());
                    } catch (IOException e) {
                        System.err.println("echo server: " + e);
                    }
                });
                t.setDaemon(true);
                t.start();
            }
        }
    }

    private static String client(InetSocketAddress server, int messages, boolean bound) throws IOException {
        SplittableRandom random = new SplittableRandom(11);
        CRC32 sent = new CRC32();
        CRC32 received = new CRC32();
        byte[] out = new byte[16 * 1024];
        byte[] in = new byte[out.length];
        long bytes = 0;
        try (Socket s = new Socket()) {
            if (bound) {
                s.bind(new InetSocketAddress(server.getAddress(), 0));
            }
            s.connect(server, 30_000);
            s.setSoTimeout(30_000);
            OutputStream o = s.getOutputStream();
            InputStream i = s.getInputStream();
            for (int m = 0; m < messages; m++) {
                int length = 1 + random.nextInt(out.length);
                for (int k = 0; k < length; k++) {
                    out[k] = (byte) random.nextInt(256);
                }
                sent.update(out, 0, length);
                o.write(out, 0, length);
                if (i.readNBytes(in, 0, length) != length) {
                    throw new EOFException("echo server closed the connection in message " + m);
                }
                received.update(in, 0, length);
                if (!Arrays.equals(out, 0, length, in, 0, length)) {
                    throw new IOException("echo of message " + m + " differs");
                }
                bytes += length;
            }
            s.shutdownOutput();
            if (i.read() != -1) {
                throw new IOException("echo server sent bytes nobody asked for");
            }
            return String.format("%s -> %s: %d messages, %d bytes, crc sent %08x received %08x %s",
                s.getLocalSocketAddress(), server, messages, bytes, sent.getValue(), received.getValue(),
                sent.getValue() == received.getValue() ? "ok" : "MISMATCH");
        }
    }
}
