package io.rdmanio.examples.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketImpl;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A program that installs java.net socket implementation factories of its own once it has made sockets, as some
 * test harnesses and old libraries do: java.net takes the first factory of each kind and refuses a second. Prints
 * what it sees; the JDK alone and the JDK with rdmanio's agent must print the same.
 */
public final class ApplicationFactoryMain {

    private ApplicationFactoryMain() {
    }

    /** The application's own implementation: it can do nothing, and says so. */
    static final class RefusingImpl extends SocketImpl {
        private static IOException refused() {
            return new IOException("the application's socket implementation refuses");
        }

        @Override protected void create(boolean stream) throws IOException { throw refused(); }
        @Override protected void connect(String host, int port) throws IOException { throw refused(); }
        @Override protected void connect(InetAddress address, int port) throws IOException { throw refused(); }
        @Override protected void connect(SocketAddress address, int timeout) throws IOException { throw refused(); }
        @Override protected void bind(InetAddress host, int port) throws IOException { throw refused(); }
        @Override protected void listen(int backlog) throws IOException { throw refused(); }
        @Override protected void accept(SocketImpl s) throws IOException { throw refused(); }
        @Override protected InputStream getInputStream() throws IOException { throw refused(); }
        @Override protected OutputStream getOutputStream() throws IOException { throw refused(); }
        @Override protected int available() throws IOException { throw refused(); }
        @Override protected void close() { }
        @Override protected void sendUrgentData(int data) throws IOException { throw refused(); }
        @Override public void setOption(int optID, Object value) throws SocketException { throw new SocketException("refused"); }
        @Override public Object getOption(int optID) throws SocketException { throw new SocketException("refused"); }
    }

    @SuppressWarnings("deprecation")
    public static void main(String[] args) throws Exception {
        AtomicInteger clients = new AtomicInteger();
        AtomicInteger servers = new AtomicInteger();
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
             Socket before = new Socket()) {
            before.connect(server.getLocalSocketAddress(), 5000);
            try (Socket accepted = server.accept()) {
                Socket.setSocketImplFactory(() -> {
                    clients.incrementAndGet();
                    return new RefusingImpl();
                });
                ServerSocket.setSocketFactory(() -> {
                    servers.incrementAndGet();
                    return new RefusingImpl();
                });
                System.out.println("the application's factories installed");

                // The sockets made before work on.
                before.getOutputStream().write("ping".getBytes());
                byte[] got = accepted.getInputStream().readNBytes(4);
                accepted.getOutputStream().write(got);
                System.out.println("a socket made before: " + new String(before.getInputStream().readNBytes(4)));

                // New sockets are the application's.
                try (Socket after = new Socket()) {
                    after.connect(server.getLocalSocketAddress(), 1000);
                    System.out.println("a new socket connected");
                } catch (IOException e) {
                    System.out.println("a new socket: " + e.getMessage());
                }
                System.out.println("client sockets from the application's factory: " + clients.get());
                try (ServerSocket another = new ServerSocket()) {
                    another.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                    System.out.println("a new server socket bound");
                } catch (IOException e) {
                    System.out.println("a new server socket: " + e.getMessage());
                }
                System.out.println("server sockets from the application's factory: " + servers.get());

                // A second factory is refused, as java.net refuses one.
                try {
                    Socket.setSocketImplFactory(RefusingImpl::new);
                    System.out.println("a second socket factory installed");
                } catch (SocketException e) {
                    System.out.println("a second socket factory: " + e.getMessage());
                }
                try {
                    ServerSocket.setSocketFactory(RefusingImpl::new);
                    System.out.println("a second server socket factory installed");
                } catch (SocketException e) {
                    System.out.println("a second server socket factory: " + e.getMessage());
                }
            }
        }
    }
}
