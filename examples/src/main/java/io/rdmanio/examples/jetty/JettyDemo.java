package io.rdmanio.examples.jetty;

import io.rdmanio.examples.httpclient.Fetch;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Jetty and both HTTP clients in one JVM: {@code JettyDemo HOST [DIR]} serves the example content on HOST and
 * fetches it with the JDK's HttpClient and Jetty's, byte-exact. Prints {@code all fetches exact} and exits 0 then.
 */
public final class JettyDemo {

    private JettyDemo() {
    }

    public static void main(String[] args) throws Exception {
        String host = args.length > 0 ? args[0] : "127.0.0.1";
        Path dir = args.length > 1 ? Path.of(args[1]) : Files.createTempDirectory("rdmanio-jetty");
        Content.writeFiles(dir);
        boolean ok;
        try (JettyServer server = new JettyServer(host, 0, dir)) {
            System.out.println("jetty on " + host + ":" + server.port());
            ok = Fetch.run("http://" + host + ":" + server.port(), dir, "both");
        }
        System.out.println(ok ? "all fetches exact" : "FETCH MISMATCH");
        System.exit(ok ? 0 : 1);
    }
}
