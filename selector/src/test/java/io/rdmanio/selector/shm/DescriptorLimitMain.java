package io.rdmanio.selector.shm;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A plain java.nio program for the descriptor-limit test, run under a low {@code ulimit -n}: in one process, opens
 * connection pairs to its own listener until a connect or accept fails (at most {@code MAX} pairs), says how the
 * first failure read, checks that every pair still carries 3,000 bytes each way byte-exact, closes 20 pairs and
 * opens 5 new ones. It knows nothing of rdmanio.
 *
 * <pre>
 * FIRST-FAILURE class: message (and its cause's, after " caused by ")
 * PAIRS n
 * BROKEN k          pairs whose bytes did not come back exact (each named on a BROKEN-PAIR line)
 * NEW ok            of 5 pairs opened after 20 were closed
 * DONE
 * </pre>
 */
public final class DescriptorLimitMain {

    private static final int MAX = 3000;

    private DescriptorLimitMain() {
    }

    public static void main(String[] args) throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0), 50);
            InetSocketAddress at = (InetSocketAddress) server.getLocalAddress();
            // One pair opened, used and closed first: the JDK initializes what a close needs on first use (its
            // file dispatcher opens a descriptor), which would fail at the limit, over TCP too.
            try (SocketChannel c = SocketChannel.open(at); SocketChannel s = server.accept()) {
                exchange(c, s, 0);
            }
            List<SocketChannel[]> pairs = new ArrayList<>();
            String first = "none";
            while (pairs.size() < MAX) {
                SocketChannel c;
                try {
                    c = SocketChannel.open(at);
                } catch (IOException e) {
                    first = e.getClass().getName() + ": " + e.getMessage()
                        + (e.getCause() == null ? "" : " caused by " + e.getCause());
                    break;
                }
                try {
                    pairs.add(new SocketChannel[] {c, server.accept()});
                } catch (IOException e) {
                    first = e.getClass().getName() + ": " + e.getMessage()
                        + (e.getCause() == null ? "" : " caused by " + e.getCause());
                    c.close();
                    break;
                }
            }
            System.out.println("FIRST-FAILURE " + first);
            System.out.println("PAIRS " + pairs.size());
            int broken = 0;
            for (int k = 0; k < pairs.size(); k++) {
                String a = exchange(pairs.get(k)[0], pairs.get(k)[1], k);
                String b = exchange(pairs.get(k)[1], pairs.get(k)[0], k + 7);
                if (a != null || b != null) {
                    broken++;
                    System.out.println("BROKEN-PAIR " + k + ": " + a + " / " + b);
                }
            }
            System.out.println("BROKEN " + broken);
            for (int k = 0; k < 20 && !pairs.isEmpty(); k++) {
                SocketChannel[] p = pairs.remove(pairs.size() - 1);
                p[0].close();
                p[1].close();
            }
            int ok = 0;
            for (int k = 0; k < 5; k++) {
                try {
                    SocketChannel c = SocketChannel.open(at);
                    SocketChannel s = server.accept();
                    pairs.add(new SocketChannel[] {c, s});
                    ok += exchange(c, s, 1000 + k) == null ? 1 : 0;
                } catch (IOException e) {
                    System.out.println("NEW-FAILED " + e);
                }
            }
            System.out.println("NEW " + ok);
            for (SocketChannel[] p : pairs) {
                p[0].close();
                p[1].close();
            }
        }
        System.out.println("DONE");
        System.out.flush();
    }

    /** 3,000 bytes from {@code from} to {@code to}; null when they arrived exact, else what went wrong. */
    private static String exchange(SocketChannel from, SocketChannel to, int seed) {
        byte[] sent = new byte[3000];
        new Random(seed).nextBytes(sent);
        try {
            ByteBuffer out = ByteBuffer.wrap(sent);
            while (out.hasRemaining()) {
                from.write(out);
            }
            ByteBuffer in = ByteBuffer.allocate(sent.length);
            while (in.hasRemaining()) {
                if (to.read(in) < 0) {
                    return "end of stream";
                }
            }
            return java.util.Arrays.equals(sent, in.array()) ? null : "bytes differ";
        } catch (IOException e) {
            return e.toString();
        }
    }
}
