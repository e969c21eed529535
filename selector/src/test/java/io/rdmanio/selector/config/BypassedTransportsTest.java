package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** Which loaded classes show a native transport that bypasses rdmanio, whatever the shading prefix. */
class BypassedTransportsTest {

    @Test
    void eventLoopsOfNativeTransportsAreRecognisedByName() {
        assertEquals("netty-epoll", BypassedTransports.kindOf("io/netty/channel/epoll/EpollEventLoop"));
        assertEquals("netty-epoll", BypassedTransports.kindOf("io/netty/channel/epoll/EpollIoHandler"));
        assertEquals("netty-epoll",
            BypassedTransports.kindOf("io/grpc/netty/shaded/io/netty/channel/epoll/EpollEventLoop"));
        assertEquals("netty-io_uring", BypassedTransports.kindOf("io/netty/channel/uring/IoUringIoHandler"));
        assertEquals("netty-io_uring",
            BypassedTransports.kindOf("io/netty/incubator/channel/uring/IOUringEventLoop"));
        assertEquals("netty-kqueue", BypassedTransports.kindOf("io/netty/channel/kqueue/KQueueIoHandler"));
        // Asking whether epoll is available loads Epoll, not an event loop: nothing bypassed yet.
        assertNull(BypassedTransports.kindOf("io/netty/channel/epoll/Epoll"));
        assertNull(BypassedTransports.kindOf("io/netty/channel/nio/NioEventLoop"));
        assertNull(BypassedTransports.kindOf(null));
    }
}
