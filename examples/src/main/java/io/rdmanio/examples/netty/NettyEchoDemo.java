package io.rdmanio.examples.netty;

import java.net.InetSocketAddress;

/**
 * The Netty echo server and its clients in one JVM: {@code NettyEchoDemo HOST [--clients N] [--bytes N]}. Prints
 * {@code all netty echoes intact} and exits 0 when every byte came back.
 */
public final class NettyEchoDemo {

    private NettyEchoDemo() {
    }

    public static void main(String[] args) throws Exception {
        String host = args.length > 0 ? args[0] : "127.0.0.1";
        int clients = 4;
        int bytes = 4 << 20;
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "--clients" -> clients = Integer.parseInt(args[++i]);
                case "--bytes" -> bytes = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("unknown option " + args[i]);
                    System.exit(2);
                }
            }
        }
        boolean ok;
        try (NettyEchoServer server = new NettyEchoServer(host, 0)) {
            InetSocketAddress a = server.localAddress();
            System.out.println("netty echo server on " + a.getAddress().getHostAddress() + ":" + a.getPort());
            ok = NettyEchoClient.run(host, a.getPort(), clients, bytes, 120);
        }
        System.out.println(ok ? "all netty echoes intact" : "NETTY ECHO MISMATCH");
        System.exit(ok ? 0 : 1);
    }
}
