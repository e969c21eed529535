package io.rdmanio.selector.shm;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * A plain java.nio writer for the writer-ending tests: connects to {@code 127.0.0.1:PORT}, writes {@code BYTES}
 * bytes of {@link NioPeerMain#pattern} in blocking mode, says {@code WROTE n}, then {@code ENDING how} and ends
 * its life one way:
 *
 * <pre>
 * return         return from main, the channel left open
 * exit           System.exit(0), the channel left open
 * close-return   close, then return from main
 * close-exit     close, then System.exit(0)
 * shutout-exit   shutdownOutput, then System.exit(0)
 * hook-close     return from main; a shutdown hook writes the last 64 KiB, then closes
 * hook-slow      as hook-close, but the hook first works for half a second (a graceful stop that takes its time)
 * hang           nothing: waits (at most ten minutes) to be killed
 * hang-unread    reads one byte of what the peer sends, then waits to be killed with the rest unread
 * halt           Runtime.halt(0) at once: no shutdown hook runs, the channel is left open
 * nb-return      writes in non-blocking mode until writes take nothing for a second (what the connection holds,
 *                its staging included), says {@code WROTE n} with the bytes taken, then returns from main
 * small-hang     writes in blocking writes of 8 KiB, saying {@code RETURNED n} after each (n: the bytes of the
 *                writes that returned), then waits (at most ten minutes) to be killed
 * linger0-exit   SO_LINGER 0 set before writing, then System.exit(0) with the channel open
 * unread-exit    reads one byte of what the peer sends, then System.exit(0) with the rest unread
 * exit-blocked   System.exit(0) while three threads are blocked: in a read of the connection (the peer sends
 *                nothing), in a select on it, in an accept of a listener nobody connects to; any of them that
 *                wakes during the exit says {@code ERROR woke}: on TCP they stay blocked until the process is gone
 * </pre>
 * It knows nothing of rdmanio: the JVM it runs in decides whether the socket is the JDK's TCP or a fabric's.
 */
public final class WriterEndingMain {

    private WriterEndingMain() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = System.out;
        int port = Integer.parseInt(args[0]);
        int bytes = Integer.parseInt(args[1]);
        String ending = args[2];
        SocketChannel ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
        if (ending.equals("linger0-exit")) {
            ch.setOption(StandardSocketOptions.SO_LINGER, 0);
        }
        ByteBuffer b = ByteBuffer.wrap(NioPeerMain.pattern(bytes, 5));
        if (ending.equals("hook-close") || ending.equals("hook-slow")) {
            // The rest is written by a shutdown hook, as a server's graceful stop answers its last requests.
            b.limit(bytes - (64 << 10));
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    if (ending.equals("hook-slow")) {
                        Thread.sleep(500);
                    }
                    b.limit(bytes);
                    while (b.hasRemaining()) {
                        ch.write(b);
                    }
                    ch.close();
                } catch (Exception e) {
                    out.println("ERROR in the hook: " + e);
                    out.flush();
                }
            }, "writer-hook"));
        }
        if (ending.equals("nb-return")) {
            ch.configureBlocking(false);
            long idleSince = System.nanoTime();
            while (b.hasRemaining() && System.nanoTime() - idleSince < 1_000_000_000L) {
                if (ch.write(b) > 0) {
                    idleSince = System.nanoTime();
                } else {
                    Thread.sleep(5);
                }
            }
            out.println("WROTE " + b.position());
            out.flush();
            return;
        }
        if (ending.equals("small-hang")) {
            while (b.hasRemaining()) {
                b.limit(Math.min(bytes, b.position() + 8192));
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                out.println("RETURNED " + b.position());
                out.flush();
                b.limit(bytes);
            }
        }
        while (b.hasRemaining()) {
            ch.write(b);
        }
        out.println("WROTE " + bytes);
        out.println("ENDING " + ending);
        out.flush();
        switch (ending) {
            case "return":
            case "hook-close":
            case "hook-slow":
                return;
            case "exit":
                System.exit(0);
                break;
            case "close-return":
                ch.close();
                return;
            case "close-exit":
                ch.close();
                System.exit(0);
                break;
            case "shutout-exit":
                ch.shutdownOutput();
                System.exit(0);
                break;
            case "linger0-exit":
                System.exit(0);
                break;
            case "unread-exit":
                // One byte proves the peer's bytes arrived; the kernel resets a socket closed with bytes unread.
                if (ch.read(ByteBuffer.allocate(1)) != 1) {
                    out.println("ERROR no byte from the peer");
                    System.exit(2);
                }
                System.exit(0);
                break;
            case "exit-blocked":
                exitBlocked(ch, out);
                break;
            case "hang":
            case "small-hang":
                Thread.sleep(600_000);
                System.exit(3);
                break;
            case "hang-unread":
                if (ch.read(ByteBuffer.allocate(1)) != 1) {
                    out.println("ERROR no byte from the peer");
                    System.exit(2);
                }
                out.println("UNREAD");
                out.flush();
                Thread.sleep(600_000);
                System.exit(3);
                break;
            case "halt":
                Runtime.getRuntime().halt(0);
                break;
            default:
                out.println("ERROR unknown ending " + ending);
                System.exit(2);
        }
    }

    private static void exitBlocked(SocketChannel ch, PrintStream out) throws Exception {
        // The selected connection is one of this process's own (both ends here, both closed at exit).
        ServerSocketChannel local = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        SocketChannel near = SocketChannel.open(local.getLocalAddress());
        SocketChannel selected = local.accept();
        selected.configureBlocking(false);
        Selector selector = Selector.open();
        selected.register(selector, SelectionKey.OP_READ);
        ServerSocketChannel idle = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        CountDownLatch started = new CountDownLatch(3);
        List<Thread> blocked = List.of(
            blocked("read", started, out, () -> "read " + ch.read(ByteBuffer.allocate(16))),
            blocked("select", started, out, () -> "select " + selector.select()),
            blocked("accept", started, out, () -> "accept " + idle.accept()));
        started.await();
        Thread.sleep(300); // into their waits
        out.println("BLOCKED " + blocked.size() + (near.isOpen() ? "" : " (closed)"));
        out.flush();
        System.exit(0);
    }

    private interface Blocking {
        String call() throws Exception;
    }

    private static Thread blocked(String name, CountDownLatch started, PrintStream out, Blocking op) {
        Thread t = new Thread(() -> {
            started.countDown();
            String result;
            try {
                result = op.call();
            } catch (Exception e) {
                result = e.toString();
            }
            out.println("ERROR woke: " + name + ": " + result);
            out.flush();
        }, "blocked-" + name);
        t.start();
        return t;
    }
}
