package io.rdmanio.examples.jetty;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ResourceHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.resource.ResourceFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A plain Jetty 12 server with a standard {@link ServerConnector}: static files from a directory and a dynamic
 * handler ({@code /dynamic/N} answers N bytes). Nothing here knows about rdmanio.
 * {@code JettyServer HOST PORT DIR} writes the example files into DIR, prints {@code jetty on HOST:PORT} and
 * serves until the JVM is stopped.
 */
public final class JettyServer implements AutoCloseable {

    private final Server server;
    private final ServerConnector connector;

    public JettyServer(String host, int port, Path dir) throws Exception {
        QueuedThreadPool threads = new QueuedThreadPool(16, 4);
        threads.setName("jetty");
        server = new Server(threads);
        connector = new ServerConnector(server);
        connector.setHost(host);
        connector.setPort(port);
        server.addConnector(connector);
        ResourceHandler files = new ResourceHandler();
        files.setBaseResource(ResourceFactory.of(server).newResource(dir));
        files.setDirAllowed(false);
        server.setHandler(new Handler.Sequence(new Dynamic(), files));
        server.start();
    }

    public int port() {
        return connector.getLocalPort();
    }

    @Override
    public void close() throws IOException {
        try {
            server.stop();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException("stopping jetty", e);
        }
    }

    /** {@code /dynamic/N}: N computed bytes, written in one go. */
    static final class Dynamic extends Handler.Abstract {
        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            String path = Request.getPathInContext(request);
            if (!path.startsWith(Content.DYNAMIC_PREFIX)) {
                return false;
            }
            int n;
            try {
                n = Integer.parseInt(path.substring(Content.DYNAMIC_PREFIX.length()));
            } catch (NumberFormatException e) {
                Response.writeError(request, response, callback, 400, "not a size: " + path);
                return true;
            }
            if (n < 0 || n > 64 << 20) {
                Response.writeError(request, response, callback, 400, "size out of range: " + n);
                return true;
            }
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/octet-stream");
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, n);
            response.write(true, ByteBuffer.wrap(Content.dynamic(n)), callback);
            return true;
        }
    }

    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        Path dir = Path.of(args[2]);
        Content.writeFiles(dir);
        JettyServer s = new JettyServer(host, port, dir);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                s.close();
            } catch (IOException e) {
                System.err.println("stopping jetty: " + e);
            }
        }, "jetty-stop"));
        System.out.println("jetty on " + host + ":" + s.port());
        System.out.flush();
        s.server.join();
    }
}
