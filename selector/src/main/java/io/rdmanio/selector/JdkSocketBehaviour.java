package io.rdmanio.selector;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;

/**
 * Where the JDKs' own TCP channels and socket adaptors differ from one JDK to another, what the running JDK's do.
 * Found out once, the first time it is asked, by asking the JDK's own channels (not by the JDK's version), with no
 * network traffic: two channels are opened and closed, and neither connects.
 *
 * <ul>
 *   <li>The socket adaptor's connect (JDK-8343791; JDK 25, not 17): it looks at an unresolved address before
 *       anything else ("Socket is closed", "Already connected", or else it closes the socket and throws an
 *       {@code UnknownHostException}), and its translation of a channel's exceptions makes an
 *       {@code AlreadyConnectedException} the {@code SocketException} "Already connected". JDK 17's adaptor finds an
 *       unresolved address as its channel's connect does, after the timeout's check, as an
 *       {@code UnknownHostException} that leaves the socket open, and passes {@code AlreadyConnectedException} on.
 *       Both come with the same change, so one probe tells both: whether an unresolved connect closes the socket.</li>
 *   <li>That {@code UnknownHostException}'s message: none on JDK 17; on JDK 25 the address, or nothing (an empty
 *       message) when {@code jdk.includeInExceptions} leaves host information out.</li>
 *   <li>A blocking connect of a closed channel: JDK 17's begins its I/O operation before it finds the channel
 *       closed, so the end of that operation reports an {@code AsynchronousCloseException}; JDK 25's checks first:
 *       {@code ClosedChannelException}. (The adaptor's connect on a closed socket is an
 *       {@code AsynchronousCloseException} on both.)</li>
 * </ul>
 *
 * If the probe cannot be made (no JDK channel can be opened), the JDK's feature version stands in for it: JDK 25 or
 * later as JDK 25, anything earlier as JDK 17, the two versions whose behaviour is known (the tests check both).
 */
final class JdkSocketBehaviour {

    private JdkSocketBehaviour() {
    }

    /** Whether the adaptor's connect looks at an unresolved address first, and closes the socket for it. */
    static boolean adaptorConnectChecksUnresolvedFirst() {
        return Probe.UNRESOLVED_FIRST;
    }

    /** Whether the adaptor makes {@code AlreadyConnectedException} the {@code SocketException} "Already connected". */
    static boolean adaptorTranslatesAlreadyConnected() {
        return Probe.UNRESOLVED_FIRST;
    }

    /** The message of the {@code UnknownHostException} the adaptor's connect throws for {@code remote}. */
    static String unknownHostMessage(InetSocketAddress remote) {
        switch (Probe.UNKNOWN_HOST_MESSAGE) {
            case Probe.MESSAGE_ADDRESS:
                return collapseSpaces(remote.toString());
            case Probe.MESSAGE_EMPTY:
                return "";
            default:
                return null;
        }
    }

    /** Whether a blocking connect of a closed channel throws {@code AsynchronousCloseException} (else closed). */
    static boolean closedBlockingConnectIsAsynchronousClose() {
        return Probe.CLOSED_CONNECT_ASYNCHRONOUS;
    }

    /** As the JDK's message filter: no leading, trailing or repeated spaces. */
    private static String collapseSpaces(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        boolean space = true;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == ' ') {
                if (space) {
                    continue;
                }
                space = true;
            } else {
                space = false;
            }
            sb.append(c);
        }
        int n = sb.length();
        if (n > 0 && sb.charAt(n - 1) == ' ') {
            sb.setLength(n - 1);
        }
        return sb.toString();
    }

    /** The answers, found when first asked for. */
    private static final class Probe {

        static final int MESSAGE_NONE = 0;
        static final int MESSAGE_EMPTY = 1;
        static final int MESSAGE_ADDRESS = 2;

        static final boolean UNRESOLVED_FIRST;
        static final int UNKNOWN_HOST_MESSAGE;
        static final boolean CLOSED_CONNECT_ASYNCHRONOUS;

        static {
            boolean jdk25 = Runtime.version().feature() >= 25;
            boolean unresolvedFirst = jdk25;
            int message = jdk25 ? MESSAGE_ADDRESS : MESSAGE_NONE;
            boolean closedAsync = !jdk25;
            SelectorProvider jdk = null;
            try {
                jdk = RdmaSelectorProvider.jdkProvider();
            } catch (RuntimeException e) {
                // no JDK channels to ask: the version stands in
            }
            if (jdk != null) {
                InetSocketAddress unresolved = InetSocketAddress.createUnresolved("rdmanio.invalid", 1);
                SocketChannel sc = null;
                try {
                    sc = jdk.openSocketChannel();
                    sc.socket().connect(unresolved);
                } catch (UnknownHostException e) {
                    String m = e.getMessage();
                    message = m == null ? MESSAGE_NONE
                            : m.contains("rdmanio.invalid") ? MESSAGE_ADDRESS : MESSAGE_EMPTY;
                    unresolvedFirst = !sc.isOpen();
                } catch (Exception e) {
                    // not as either JDK: the version stands in
                } finally {
                    closeQuietly(sc);
                }
                try {
                    SocketChannel closed = jdk.openSocketChannel();
                    closed.close();
                    closed.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), 1));
                } catch (AsynchronousCloseException e) {
                    closedAsync = true;
                } catch (ClosedChannelException e) {
                    closedAsync = false;
                } catch (Exception e) {
                    // not as either JDK: the version stands in
                }
            }
            UNRESOLVED_FIRST = unresolvedFirst;
            UNKNOWN_HOST_MESSAGE = message;
            CLOSED_CONNECT_ASYNCHRONOUS = closedAsync;
        }

        private Probe() {
        }

        private static void closeQuietly(SocketChannel sc) {
            if (sc != null) {
                try {
                    sc.close();
                } catch (Exception e) {
                    // nothing was sent on it
                }
            }
        }
    }
}
