package io.rdmanio.selector;

import java.io.FileDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.InetAddress;
import java.net.SocketAddress;
import java.net.SocketImpl;
import java.net.SocketOption;
import java.util.Set;

/**
 * The JDK's own {@link SocketImpl}s, reached for the sockets the rules leave on TCP. {@code SocketImpl}'s methods
 * are protected, so a delegating implementation in another package calls them through method handles; this needs
 * {@code java.base} to open {@code java.net} to this module, which the agent does ({@link #available()} says
 * whether it was done). The handles dispatch virtually: a call runs the JDK implementation's own method.
 *
 * <p>Client sockets get what {@code new Socket()} gets without a factory: the JDK's SOCKS implementation (which
 * consults the {@code ProxySelector} and connects directly when it says so) around a platform implementation;
 * server sockets and accepted sockets a platform implementation. Stateless; thread-safe.
 */
final class JdkSocketImpls {

    /** Why the handles could not be found (null when found). */
    private static String unavailable;
    private static final Handles HANDLES = findHandles();

    private JdkSocketImpls() {
    }

    /** Whether {@code java.net} is open to this module, so that the JDK's implementations can be delegated to. */
    static boolean available() {
        return HANDLES != null;
    }

    /** Why the JDK's implementations cannot be delegated to; null when they can. */
    static String unavailableReason() {
        return unavailable;
    }

    private static Handles findHandles() {
        if (!SocketImpl.class.getModule().isOpen("java.net", JdkSocketImpls.class.getModule())) {
            unavailable = "java.base does not open java.net to rdmanio (the agent opens it)";
            return null;
        }
        try {
            return Handles.find();
        } catch (IllegalStateException e) {
            unavailable = e.getMessage();
            return null;
        }
    }

    private static Handles h() {
        if (HANDLES == null) {
            throw new IllegalStateException(unavailable);
        }
        return HANDLES;
    }

    /** A new, uncreated client implementation, as {@code new Socket()} makes without a factory. */
    static SocketImpl newClient() {
        try {
            SocketImpl platform = (SocketImpl) h().createPlatform.invoke(false);
            return (SocketImpl) h().newSocks.invoke(platform);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** A new, uncreated platform implementation: a server socket's ({@code server}), or one to accept into. */
    static SocketImpl newPlatform(boolean server) {
        try {
            return (SocketImpl) h().createPlatform.invoke(server);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static void create(SocketImpl impl, boolean stream) throws IOException {
        invoke(h().create, impl, stream);
    }

    static void connect(SocketImpl impl, SocketAddress address, int timeout) throws IOException {
        invoke(h().connect, impl, address, timeout);
    }

    static void bind(SocketImpl impl, InetAddress host, int port) throws IOException {
        invoke(h().bind, impl, host, port);
    }

    static void listen(SocketImpl impl, int backlog) throws IOException {
        invoke(h().listen, impl, backlog);
    }

    static void accept(SocketImpl impl, SocketImpl into) throws IOException {
        invoke(h().accept, impl, into);
    }

    static InputStream inputStream(SocketImpl impl) throws IOException {
        return (InputStream) invoke(h().inputStream, impl);
    }

    static OutputStream outputStream(SocketImpl impl) throws IOException {
        return (OutputStream) invoke(h().outputStream, impl);
    }

    static int available(SocketImpl impl) throws IOException {
        return (Integer) invoke(h().available, impl);
    }

    static void close(SocketImpl impl) throws IOException {
        invoke(h().close, impl);
    }

    static void shutdownInput(SocketImpl impl) throws IOException {
        invoke(h().shutdownInput, impl);
    }

    static void shutdownOutput(SocketImpl impl) throws IOException {
        invoke(h().shutdownOutput, impl);
    }

    static void sendUrgentData(SocketImpl impl, int data) throws IOException {
        invoke(h().sendUrgentData, impl, data);
    }

    static boolean supportsUrgentData(SocketImpl impl) {
        return (Boolean) invokeUnchecked(h().supportsUrgentData, impl);
    }

    static <T> void setOption(SocketImpl impl, SocketOption<T> name, T value) throws IOException {
        invoke(h().setOption, impl, name, value);
    }

    @SuppressWarnings("unchecked")
    static <T> T getOption(SocketImpl impl, SocketOption<T> name) throws IOException {
        return (T) invoke(h().getOption, impl, name);
    }

    @SuppressWarnings("unchecked")
    static Set<SocketOption<?>> supportedOptions(SocketImpl impl) {
        return (Set<SocketOption<?>>) invokeUnchecked(h().supportedOptions, impl);
    }

    static FileDescriptor fileDescriptor(SocketImpl impl) {
        return (FileDescriptor) invokeUnchecked(h().fileDescriptor, impl);
    }

    static InetAddress inetAddress(SocketImpl impl) {
        return (InetAddress) invokeUnchecked(h().inetAddress, impl);
    }

    static int port(SocketImpl impl) {
        return (Integer) invokeUnchecked(h().port, impl);
    }

    static int localPort(SocketImpl impl) {
        return (Integer) invokeUnchecked(h().localPort, impl);
    }

    static void setPerformancePreferences(SocketImpl impl, int connectionTime, int latency, int bandwidth) {
        invokeUnchecked(h().performancePreferences, impl, connectionTime, latency, bandwidth);
    }

    private static Object invoke(MethodHandle mh, Object... args) throws IOException {
        try {
            return mh.invokeWithArguments(args);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** For the methods that declare no IOException. */
    private static Object invokeUnchecked(MethodHandle mh, Object... args) {
        try {
            return invoke(mh, args);
        } catch (IOException e) {
            throw unexpected(e);
        }
    }

    private static IllegalStateException unexpected(Throwable t) {
        if (t instanceof RuntimeException) {
            throw (RuntimeException) t;
        }
        if (t instanceof Error) {
            throw (Error) t;
        }
        return new IllegalStateException("the JDK's SocketImpl failed unexpectedly: " + t, t);
    }

    /** The handles, found once; {@code null} when {@code java.net} is not open to this module. */
    private record Handles(MethodHandle createPlatform, MethodHandle newSocks, MethodHandle create,
                           MethodHandle connect, MethodHandle bind, MethodHandle listen, MethodHandle accept,
                           MethodHandle inputStream, MethodHandle outputStream, MethodHandle available,
                           MethodHandle close, MethodHandle shutdownInput, MethodHandle shutdownOutput,
                           MethodHandle sendUrgentData, MethodHandle supportsUrgentData, MethodHandle setOption,
                           MethodHandle getOption, MethodHandle supportedOptions, MethodHandle fileDescriptor,
                           MethodHandle inetAddress, MethodHandle port, MethodHandle localPort,
                           MethodHandle performancePreferences) {

        static Handles find() {
            try {
                MethodHandles.Lookup l = MethodHandles.privateLookupIn(SocketImpl.class, MethodHandles.lookup());
                Class<?> s = SocketImpl.class;
                Class<?> socks = Class.forName("java.net.SocksSocketImpl");
                return new Handles(
                    l.findStatic(s, "createPlatformSocketImpl", MethodType.methodType(SocketImpl.class, boolean.class)),
                    MethodHandles.privateLookupIn(socks, MethodHandles.lookup())
                        .findConstructor(socks, MethodType.methodType(void.class, SocketImpl.class)),
                    l.findVirtual(s, "create", MethodType.methodType(void.class, boolean.class)),
                    l.findVirtual(s, "connect", MethodType.methodType(void.class, SocketAddress.class, int.class)),
                    l.findVirtual(s, "bind", MethodType.methodType(void.class, InetAddress.class, int.class)),
                    l.findVirtual(s, "listen", MethodType.methodType(void.class, int.class)),
                    l.findVirtual(s, "accept", MethodType.methodType(void.class, SocketImpl.class)),
                    l.findVirtual(s, "getInputStream", MethodType.methodType(InputStream.class)),
                    l.findVirtual(s, "getOutputStream", MethodType.methodType(OutputStream.class)),
                    l.findVirtual(s, "available", MethodType.methodType(int.class)),
                    l.findVirtual(s, "close", MethodType.methodType(void.class)),
                    l.findVirtual(s, "shutdownInput", MethodType.methodType(void.class)),
                    l.findVirtual(s, "shutdownOutput", MethodType.methodType(void.class)),
                    l.findVirtual(s, "sendUrgentData", MethodType.methodType(void.class, int.class)),
                    l.findVirtual(s, "supportsUrgentData", MethodType.methodType(boolean.class)),
                    l.findVirtual(s, "setOption", MethodType.methodType(void.class, SocketOption.class, Object.class)),
                    l.findVirtual(s, "getOption", MethodType.methodType(Object.class, SocketOption.class)),
                    l.findVirtual(s, "supportedOptions", MethodType.methodType(Set.class)),
                    l.findVirtual(s, "getFileDescriptor", MethodType.methodType(FileDescriptor.class)),
                    l.findVirtual(s, "getInetAddress", MethodType.methodType(InetAddress.class)),
                    l.findVirtual(s, "getPort", MethodType.methodType(int.class)),
                    l.findVirtual(s, "getLocalPort", MethodType.methodType(int.class)),
                    l.findVirtual(s, "setPerformancePreferences",
                        MethodType.methodType(void.class, int.class, int.class, int.class)));
            } catch (ReflectiveOperationException | IllegalAccessError e) {
                throw new IllegalStateException("this JDK's java.net.SocketImpl is not the one rdmanio knows: " + e, e);
            }
        }
    }
}
