package io.rdmanio.examples.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * A plain Netty 4.1 NIO echo client: {@code NettyEchoClient HOST PORT [--clients N] [--bytes N]}. Each client
 * sends pseudo-random bytes in writes of varying size and checks that exactly the same bytes come back. Prints one
 * line per client and {@code all netty echoes intact}; exits 0 only then.
 */
public final class NettyEchoClient {

    private NettyEchoClient() {
    }

    /** Runs {@code clients} clients at once against host:port; true when every echo came back intact. */
    public static boolean run(String host, int port, int clients, int bytes, long timeoutSeconds) throws Exception {
        return run(host, port, clients, bytes, timeoutSeconds, null);
    }

    /** As above, each client bound to {@code bindHost} (an ephemeral port) before it connects, when not null. */
    public static boolean run(String host, int port, int clients, int bytes, long timeoutSeconds, String bindHost)
            throws Exception {
        EventLoopGroup group = new NioEventLoopGroup(2);
        try {
            CompletableFuture<?>[] done = new CompletableFuture<?>[clients];
            for (int i = 0; i < clients; i++) {
                done[i] = oneClient(group, host, port, bytes, 17 + i, bindHost);
            }
            boolean ok = true;
            for (int i = 0; i < clients; i++) {
                String line = (String) done[i].get(timeoutSeconds, TimeUnit.SECONDS);
                System.out.println(line);
                ok &= line.endsWith(" ok");
            }
            return ok;
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private static CompletableFuture<String> oneClient(EventLoopGroup group, String host, int port, int bytes,
                                                       long seed, String bindHost) throws InterruptedException {
        byte[] data = new byte[bytes];
        new Random(seed).nextBytes(data);
        CRC32 sent = new CRC32();
        sent.update(data);
        CompletableFuture<String> result = new CompletableFuture<>();
        CRC32 received = new CRC32();
        long[] count = new long[1];
        String[] ends = new String[1];
        Channel ch = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) {
                        c.pipeline().addLast(new SimpleChannelInboundHandler<ByteBuf>() {
                            @Override
                            public void channelActive(ChannelHandlerContext ctx) {
                                // Read now: a closed Netty channel no longer knows its addresses.
                                ends[0] = ctx.channel().localAddress() + " -> " + ctx.channel().remoteAddress();
                            }

                            @Override
                            protected void channelRead0(ChannelHandlerContext ctx, ByteBuf msg) {
                                int n = msg.readableBytes();
                                byte[] b = new byte[n];
                                msg.readBytes(b);
                                received.update(b);
                                count[0] += n;
                                if (count[0] >= bytes) {
                                    ctx.close();
                                }
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                boolean ok = count[0] == bytes && received.getValue() == sent.getValue();
                                result.complete(String.format("netty client %s: %d bytes, crc sent %08x received %08x %s",
                                        ends[0], count[0],
                                        sent.getValue(), received.getValue(), ok ? "ok" : "MISMATCH"));
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                result.completeExceptionally(cause);
                                ctx.close();
                            }
                        });
                    }
                }).connect(new InetSocketAddress(host, port),
                    bindHost == null ? null : new InetSocketAddress(bindHost, 0)).sync().channel();
        // Writes of 1 byte up to 64 KiB, so small frames and split frames both occur.
        Random sizes = new Random(seed * 31);
        int off = 0;
        while (off < bytes) {
            int n = Math.min(bytes - off, 1 + sizes.nextInt(65536));
            ch.write(ch.alloc().buffer(n).writeBytes(data, off, n));
            off += n;
        }
        ch.flush();
        return result;
    }

    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        int clients = 4;
        int bytes = 4 << 20;
        String bindHost = null;
        for (int i = 2; i < args.length; i++) {
            switch (args[i]) {
                case "--bind" -> bindHost = args[++i];
                case "--clients" -> clients = Integer.parseInt(args[++i]);
                case "--bytes" -> bytes = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("unknown option " + args[i]);
                    System.exit(2);
                }
            }
        }
        boolean ok = run(host, port, clients, bytes, 120, bindHost);
        System.out.println(ok ? "all netty echoes intact" : "NETTY ECHO MISMATCH");
        System.exit(ok ? 0 : 1);
    }
}
