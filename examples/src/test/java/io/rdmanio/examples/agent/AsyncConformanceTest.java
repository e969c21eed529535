package io.rdmanio.examples.agent;

/**
 * NIO.2's asynchronous socket channels under the agent: the scenarios of {@link AsyncScenarios} (handlers and
 * futures, timeouts, pending-operation errors, close and cancel, groups and their termination, options, and
 * asynchronous ends paired with NIO and java.net ends) on the JDK, routed over shm and loopback, and unrouted
 * ({@link AbstractScenarioConformanceTest}).
 */
class AsyncConformanceTest extends AbstractScenarioConformanceTest {

    AsyncConformanceTest() {
        super(AsyncScenarios.class, 30,
            "echoWithHandlers: 1 clients: 1048576 bytes, same: true",
            "resetAndShutdowns: reset read: java.io.IOException: Connection reset, then -1, then -1; write waiting at shutdownOutput: "
                + "java.io.IOException: Broken pipe; read waiting at shutdownInput: -1; shutdownInput after close: "
                + "java.nio.channels.ClosedChannelException",
            "boundBeforeConnect: read 7, peer sees the bound address true, local kept true, another bind "
                + "java.net.BindException",
            "echoManyAtOnce: 8 clients: 262144 bytes, same: true",
            "readTimeout: failed java.nio.channels.InterruptedByTimeoutException; then java.lang.IllegalStateException "
                + "Reading not allowed due to timeout or cancellation; write still works: 3; open true",
            "closeWhileReading: failed java.nio.channels.AsynchronousCloseException; read after close failed "
                + "java.nio.channels.ClosedChannelException; peer reads -1",
            "connectRefused: failed java.net.ConnectException; open false",
            "fixedGroup: handler thread scenario-group; shutdown true, terminated while open false, open after "
                + "shutdown java.nio.channels.ShutdownChannelGroupException, terminated after close true",
            "nioClientToAsyncServer: from nio / from aio",
            "asyncClientToNioServer: from aio / from nio",
            "socketToAsyncServer: from net / from aio",
            "resetWithReadAndWriteWaiting: a write waits true; the write: java.io.IOException: Connection reset by "
                + "peer; the read: -1; next read: -1; next write: java.io.IOException: Broken pipe",
            "acceptAfterCancel: cancel true, isCancelled true; next java.lang.RuntimeException: Accept not allowed due "
                + "cancellation; open true");
    }
}
