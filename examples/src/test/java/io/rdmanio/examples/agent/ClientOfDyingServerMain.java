package io.rdmanio.examples.agent;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * Connects to {@code 127.0.0.1:args[0]} (a server that never accepts), says so, then blocks in a read until the
 * server's process has ended, and prints what the read and two writes after it give.
 */
public final class ClientOfDyingServerMain {

    private ClientOfDyingServerMain() {
    }

    public static void main(String[] args) throws Exception {
        SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0])));
        System.out.println("connected");
        System.out.flush();
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(60_000);
                System.out.println("FAILED: nothing happened for 60 s");
                System.exit(2);
            } catch (InterruptedException e) {
                // done
            }
        });
        watchdog.setDaemon(true);
        watchdog.start();
        String read;
        try {
            read = Integer.toString(c.read(ByteBuffer.allocate(16)));
        } catch (IOException e) {
            read = e.getClass().getSimpleName() + ": " + e.getMessage();
        }
        System.out.println("read " + read);
        for (int i = 1; i <= 2; i++) {
            String w;
            try {
                w = Integer.toString(c.write(ByteBuffer.allocate(10)));
            } catch (IOException e) {
                w = e.getClass().getSimpleName() + ": " + e.getMessage();
            }
            System.out.println("write " + i + " " + w);
        }
        watchdog.interrupt();
    }
}
