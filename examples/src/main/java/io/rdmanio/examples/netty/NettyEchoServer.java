package io.rdmanio.examples.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;

/**
 * A plain Netty 4.1 NIO echo server: {@code NettyEchoServer HOST [PORT]}. Nothing here knows about rdmanio; started
 * with the rdmanio agent, its connections go where the rules say. Prints {@code netty echo server on HOST:PORT}
 * once listening, and runs until the JVM is stopped.
 */
public final class NettyEchoServer implements AutoCloseable {

    private final EventLoopGroup boss = new NioEventLoopGroup(1);
    private final EventLoopGroup workers = new NioEventLoopGroup(2);
    private final Channel channel;

    public NettyEchoServer(String host, int port) throws InterruptedException {
        ServerBootstrap b = new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new Echo());
                    }
                });
        channel = b.bind(host, port).sync().channel();
    }

    public InetSocketAddress localAddress() {
        return (InetSocketAddress) channel.localAddress();
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        boss.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
        workers.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Writes back what it reads, and closes when the client does. */
    static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            System.err.println("echo connection failed: " + cause);
            ctx.close();
        }
    }

    public static void main(String[] args) throws Exception {
        String host = args.length > 0 ? args[0] : "127.0.0.1";
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        NettyEchoServer server = new NettyEchoServer(host, port);
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "netty-echo-stop"));
        InetSocketAddress a = server.localAddress();
        System.out.println("netty echo server on " + a.getAddress().getHostAddress() + ":" + a.getPort());
        System.out.flush();
        server.channel.closeFuture().sync();
    }
}
