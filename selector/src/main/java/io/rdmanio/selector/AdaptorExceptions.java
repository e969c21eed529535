package io.rdmanio.selector;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.channels.AlreadyBoundException;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NotYetBoundException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;

/**
 * A channel's exception as the running JDK's socket adaptors pass it on ({@code sun.nio.ch.Net}
 * {@code translateException}): the channel's state exceptions become {@code SocketException}s with java.net's
 * words ("Socket is closed", "Already bound", ...); other runtime exceptions and I/O errors are passed on as they
 * are. Where JDKs differ, as the running one ({@link JdkSocketBehaviour}): an {@code AlreadyConnectedException} is
 * "Already connected" on JDK 25 and passed on on JDK 17; an unresolved address given to connect is, on JDK 17, an
 * {@code UnknownHostException} without message (JDK 25's adaptor looks at the address before its channel does:
 * {@link #unknownHost}). Programs written against {@code java.net} catch these types. Stateless.
 */
final class AdaptorExceptions {

    private AdaptorExceptions() {
    }

    /**
     * For connect: an unresolved address is, as JDK 17's adaptor has it, the {@code UnknownHostException} (no
     * message, no cause) java.net throws; JDK 25's adaptor never gives its channel one, and would call it
     * "Unresolved address".
     */
    static IOException forConnect(RuntimeException e) {
        if (e instanceof UnresolvedAddressException && !JdkSocketBehaviour.adaptorConnectChecksUnresolvedFirst()) {
            return new UnknownHostException();
        }
        return forSocket(e);
    }

    /** The {@code UnknownHostException} JDK 25's adaptor throws for an unresolved address, with its message. */
    static UnknownHostException unknownHost(InetSocketAddress remote) {
        return new UnknownHostException(JdkSocketBehaviour.unknownHostMessage(remote));
    }

    /**
     * A channel's state exception as the adaptor's {@code SocketException}; any other runtime exception is
     * thrown as it is.
     */
    static SocketException forSocket(Exception e) {
        if (e instanceof SocketException) {
            return (SocketException) e;
        }
        String message = message(e);
        if (message == null) {
            if (e instanceof RuntimeException) {
                throw (RuntimeException) e;
            }
            message = e.getMessage();
        }
        SocketException se = new SocketException(message);
        se.initCause(e);
        return se;
    }

    /** java.net's words for a channel's state exception; null for any other. */
    private static String message(Exception e) {
        if (e instanceof ClosedChannelException) {
            return "Socket is closed";
        }
        if (e instanceof NotYetConnectedException) {
            return "Socket is not connected";
        }
        if (e instanceof AlreadyBoundException) {
            return "Already bound";
        }
        if (e instanceof AlreadyConnectedException && JdkSocketBehaviour.adaptorTranslatesAlreadyConnected()) {
            return "Already connected";
        }
        if (e instanceof NotYetBoundException) {
            return "Socket is not bound yet";
        }
        if (e instanceof UnsupportedAddressTypeException) {
            return "Unsupported address type";
        }
        if (e instanceof UnresolvedAddressException) {
            return "Unresolved address";
        }
        return null;
    }
}
