package io.rdmanio.core.fabric.loopback;

import static io.rdmanio.core.fabric.loopback.Link.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmEvent;
import io.rdmanio.core.fabric.CmId;
import io.rdmanio.core.fabric.CompletionQueue;
import io.rdmanio.core.fabric.EventChannel;
import io.rdmanio.core.fabric.FabricException;
import io.rdmanio.core.fabric.QueuePair;
import io.rdmanio.core.testsupport.QueueOptions;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/**
 * Connection setup as only the loopback fabric has it: one address space per JVM, wildcard listeners, the backlog.
 * What every fabric must do is in {@link LoopbackSpiConformanceTest}.
 */
class LoopbackSetupTest {

    @Test
    void bindingAnAddressInUseThrowsBindException() throws IOException {
        try (Link link = Link.unconnected(new QueueOptions())) {
            CmId other = link.serverFabric.createId(link.serverEvents);
            InetSocketAddress taken = link.listener.localAddress();
            BindException e = assertThrows(BindException.class, () -> other.bind(taken));
            assertEquals("Address already in use: " + taken + " on the loopback fabric", e.getMessage());
            // A wildcard on the same port conflicts too.
            assertThrows(BindException.class, () -> other.bind(new InetSocketAddress(taken.getPort())));
            // Another fabric in the same JVM shares the namespace.
            LoopbackFabric third = Link.open();
            try {
                CmId foreign = third.createId(third.createEventChannel());
                assertThrows(BindException.class, () -> foreign.bind(taken));
            } finally {
                third.close();
            }
            // Closing frees the address.
            link.listener.close();
            other.bind(taken);
            assertEquals(taken, other.localAddress());
        }
    }

    @Test
    void wildcardListenerAcceptsAnyAddressOnItsPortAndSpecificOnlyItsOwn() throws IOException {
        LoopbackFabric fabric = Link.open();
        try {
            EventChannel events = fabric.createEventChannel();
            CmId wildcard = fabric.createId(events);
            wildcard.bind(new InetSocketAddress(0));
            wildcard.listen(4);
            int port = wildcard.localAddress().getPort();
            assertNotEquals(0, port);
            CmId specific = fabric.createId(events);
            specific.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), 0));
            specific.listen(4);
            CompletionQueue cq = fabric.createCompletionQueue(16);
            for (String host : new String[] {"127.0.0.1", "127.0.0.3", "10.1.2.3"}) {
                CmId c = fabric.createId(fabric.createEventChannel());
                c.createQueuePair(new QueuePair.Config(cq, cq, 2, 2, 0));
                c.connect(new InetSocketAddress(InetAddress.getByName(host), port), null);
                CmEvent request = expect(events, CmEvent.Type.CONNECT_REQUEST);
                assertEquals(wildcard, request.listenId());
                assertEquals(InetAddress.getByName(host), request.id().localAddress().getAddress());
            }
            InetSocketAddress specificAddress = specific.localAddress();
            CmId c = fabric.createId(fabric.createEventChannel());
            c.createQueuePair(new QueuePair.Config(cq, cq, 2, 2, 0));
            c.connect(specificAddress, null);
            assertEquals(specific, expect(events, CmEvent.Type.CONNECT_REQUEST).listenId());
            EventChannel missEvents = fabric.createEventChannel();
            CmId miss = fabric.createId(missEvents);
            miss.createQueuePair(new QueuePair.Config(cq, cq, 2, 2, 0));
            miss.connect(new InetSocketAddress(InetAddress.getByName("127.0.0.4"), specificAddress.getPort()), null);
            expect(missEvents, CmEvent.Type.REJECTED);
        } finally {
            fabric.close();
        }
    }

    @Test
    void requestsBeyondTheBacklogAreRejectedAndClosingTheListenerRefusesPendingOnes() throws IOException {
        LoopbackFabric fabric = Link.open();
        try {
            EventChannel events = fabric.createEventChannel();
            CmId listener = fabric.createId(events);
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            listener.listen(2);
            CompletionQueue cq = fabric.createCompletionQueue(16);
            EventChannel[] clientEvents = new EventChannel[3];
            for (int i = 0; i < 3; i++) {
                clientEvents[i] = fabric.createEventChannel();
                CmId c = fabric.createId(clientEvents[i]);
                c.createQueuePair(new QueuePair.Config(cq, cq, 2, 2, 0));
                c.connect(listener.localAddress(), null);
            }
            expect(events, CmEvent.Type.CONNECT_REQUEST);
            expect(events, CmEvent.Type.CONNECT_REQUEST);
            assertNull(events.poll());
            CmEvent third = expect(clientEvents[2], CmEvent.Type.REJECTED);
            assertTrue(third.reason().contains("backlog of 2"), third.reason());
            assertNull(clientEvents[0].poll());
            listener.close();
            for (int i = 0; i < 2; i++) {
                CmEvent refused = expect(clientEvents[i], CmEvent.Type.REJECTED);
                assertTrue(refused.reason().contains("closed"), refused.reason());
                assertEquals(0, refused.privateData().remaining());
            }
        } finally {
            fabric.close();
        }
    }

    @Test
    void closingAConnectedIdDisconnectsThePeerAndFreesTheAddress() throws IOException {
        try (Link link = Link.connected()) {
            InetSocketAddress clientAddress = link.client.localAddress();
            link.client.close();
            expect(link.serverEvents, CmEvent.Type.DISCONNECTED);
            assertTrue(link.serverQp.isError());
            assertEquals(4, link.poll(link.serverRecvCq), "the server's receives are flushed");
            CmId reuse = link.clientFabric.createId(link.clientEvents);
            reuse.bind(clientAddress);
            assertEquals(clientAddress, reuse.localAddress());
        }
    }

    @Test
    void acceptAfterTheClientWentAwayFails() throws IOException {
        try (Link link = Link.requested(new QueueOptions(), null)) {
            link.server.createQueuePair(link.config(link.serverSendCq, link.serverRecvCq));
            link.client.close();
            FabricException e = assertThrows(FabricException.class, () -> link.server.accept(null));
            assertTrue(e.getMessage().contains("went away"), e.getMessage());
        }
    }
}
