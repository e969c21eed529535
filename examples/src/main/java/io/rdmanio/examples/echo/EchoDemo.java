package io.rdmanio.examples.echo;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Echo servers and clients in one process: for each address given, a server bound to it (any port) and
 * {@code --clients} concurrent clients that each send {@code --messages} messages. Plain java.nio; which transport
 * carries each connection is up to the SelectorProvider the JVM was started with.
 *
 * <pre>
 *   EchoDemo [--clients N] [--messages M] [--seed S] [--timeout SECONDS] ADDRESS...
 * </pre>
 *
 * Exits 0 when every echo came back intact, 1 otherwise, 2 on a usage error.
 */
public final class EchoDemo {

    private EchoDemo() {
    }

    public static void main(String[] args) throws Exception {
        int clients = 1;
        int messages = 100;
        long seed = 1;
        long timeoutSeconds = 120;
        List<String> addresses = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--clients" -> clients = Integer.parseInt(args[++i]);
                case "--messages" -> messages = Integer.parseInt(args[++i]);
                case "--seed" -> seed = Long.parseLong(args[++i]);
                case "--timeout" -> timeoutSeconds = Long.parseLong(args[++i]);
                default -> {
                    if (args[i].startsWith("--")) {
                        System.err.println("unknown option " + args[i]);
                        System.exit(2);
                    }
                    addresses.add(args[i]);
                }
            }
        }
        if (addresses.isEmpty() || clients < 1 || messages < 0) {
            System.err.println("usage: EchoDemo [--clients N] [--messages M] [--seed S] [--timeout SECONDS] ADDRESS...");
            System.exit(2);
        }
        System.exit(run(addresses, clients, messages, seed, timeoutSeconds) ? 0 : 1);
    }

    private static boolean run(List<String> addresses, int clients, int messages, long seed, long timeoutSeconds)
            throws IOException, InterruptedException {
        List<EchoServer> servers = new ArrayList<>();
        List<Thread> serverThreads = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(clients * addresses.size());
        boolean ok = true;
        try {
            List<Future<EchoClient.Result>> results = new ArrayList<>();
            for (String address : addresses) {
                EchoServer server = new EchoServer(new InetSocketAddress(address, 0));
                servers.add(server);
                Thread thread = new Thread(server, "echo-server-" + address);
                thread.start();
                serverThreads.add(thread);
                System.out.println("echo server on " + server.localAddress());
                for (int c = 0; c < clients; c++) {
                    results.add(pool.submit(new EchoClient(server.localAddress(), messages, seed + results.size())));
                }
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
            for (Future<EchoClient.Result> future : results) {
                try {
                    EchoClient.Result result = future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    System.out.println("echo client " + result);
                    ok &= result.intact();
                } catch (ExecutionException e) {
                    System.out.println("echo client failed: " + e.getCause());
                    e.getCause().printStackTrace();
                    ok = false;
                } catch (TimeoutException e) {
                    System.out.println("echo client did not finish within " + timeoutSeconds + " s");
                    ok = false;
                }
            }
        } finally {
            pool.shutdownNow();
            for (EchoServer server : servers) {
                server.close();
            }
            for (Thread thread : serverThreads) {
                thread.join(TimeUnit.SECONDS.toMillis(10));
            }
        }
        for (EchoServer server : servers) {
            if (server.failure() != null) {
                System.out.println("echo server failed: " + server.failure());
                ok = false;
            }
        }
        System.out.println(ok ? "all echoes intact" : "ECHO FAILED");
        return ok;
    }
}
