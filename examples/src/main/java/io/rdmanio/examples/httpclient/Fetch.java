package io.rdmanio.examples.httpclient;

import io.rdmanio.examples.jetty.Content;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.Request;

/**
 * Fetches every static file and dynamic body of the Jetty example with the JDK's {@link HttpClient} (NIO), with
 * Jetty's HttpClient (NIO) and with {@link HttpURLConnection} (java.net), and compares each byte with what was
 * served: {@code Fetch BASE_URL DIR [jdk|jetty|urlconnection|both|all]} ({@code both}: the two NIO clients;
 * {@code all}: the three).
 * Prints one line per fetch and {@code all fetches exact}; exits 0 only then. Nothing here knows about rdmanio.
 */
public final class Fetch {

    private static final int MAX_BODY = 64 << 20;

    private Fetch() {
    }

    /** Fetches everything with the clients named by {@code which}; true when every body is byte-exact. */
    public static boolean run(String base, Path dir, String which) throws Exception {
        boolean ok = true;
        if (which.equals("jdk") || which.equals("both") || which.equals("all")) {
            HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(30)).build();
            for (String path : paths()) {
                HttpResponse<byte[]> r = jdk.send(HttpRequest.newBuilder(URI.create(base + path))
                        .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofByteArray());
                ok &= check("jdk", path, r.statusCode(), r.body(), dir);
            }
        }
        if (which.equals("urlconnection") || which.equals("all")) {
            for (String path : paths()) {
                HttpURLConnection c = (HttpURLConnection) URI.create(base + path).toURL().openConnection();
                c.setConnectTimeout(30_000);
                c.setReadTimeout(60_000);
                try (InputStream in = c.getInputStream()) {
                    ok &= check("urlconnection", path, c.getResponseCode(), in.readAllBytes(), dir);
                }
            }
        }
        if (which.equals("jetty") || which.equals("both") || which.equals("all")) {
            org.eclipse.jetty.client.HttpClient jetty = new org.eclipse.jetty.client.HttpClient();
            jetty.setMaxConnectionsPerDestination(2);
            jetty.start();
            try {
                for (String path : paths()) {
                    Request request = jetty.newRequest(base + path).timeout(60, TimeUnit.SECONDS);
                    // The default limit of a buffered body (2 MiB) is below the example's largest file.
                    ContentResponse r = new CompletableResponseListener(request, MAX_BODY).send().get(60, TimeUnit.SECONDS);
                    ok &= check("jetty", path, r.getStatus(), r.getContent(), dir);
                }
            } finally {
                jetty.stop();
            }
        }
        return ok;
    }

    private static String[] paths() {
        String[] p = new String[Content.FILES.size() + Content.DYNAMIC_SIZES.size()];
        int i = 0;
        for (String f : Content.FILES) {
            p[i++] = "/" + f;
        }
        for (int n : Content.DYNAMIC_SIZES) {
            p[i++] = Content.DYNAMIC_PREFIX + n;
        }
        return p;
    }

    private static boolean check(String client, String path, int status, byte[] body, Path dir) throws Exception {
        byte[] expected = path.startsWith(Content.DYNAMIC_PREFIX)
                ? Content.dynamic(Integer.parseInt(path.substring(Content.DYNAMIC_PREFIX.length())))
                : Files.readAllBytes(dir.resolve(path.substring(1)));
        boolean ok = status == 200 && Arrays.equals(expected, body);
        System.out.println(client + " GET " + path + ": " + status + ", " + body.length + " bytes, "
                + (ok ? "exact" : "MISMATCH (expected " + expected.length + " bytes)"));
        return ok;
    }

    public static void main(String[] args) throws Exception {
        boolean ok = run(args[0], Path.of(args[1]), args.length > 2 ? args[2] : "both");
        System.out.println(ok ? "all fetches exact" : "FETCH MISMATCH");
        System.exit(ok ? 0 : 1);
    }
}
