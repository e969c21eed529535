package io.rdmanio.selector.shm;

import io.rdmanio.selector.RdmaSelectorProvider;
import io.rdmanio.selector.Tracked;
import java.lang.reflect.Method;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a TCP parity test against a peer in a second JVM ({@link NioPeerMain}) stands on: an shm fabric for this
 * JVM, and two peers, one on rdmanio over shm and one on the JDK's TCP (rdmanio with a rules file that routes
 * nothing). {@link #on} picks this JVM's provider and the peer for a transport; the resources a test opens are
 * closed after it, last first. {@link Base} is the lifecycle a test class extends.
 */
final class PeerParity implements AutoCloseable {

    /** A parity test class: the peers for the whole class, a transport per test, cleanup after each. */
    abstract static class Base {
        @TempDir
        static Path tmp;

        static PeerParity parity;

        /** This JVM's provider and the peer, for the transport {@link #on} selected. */
        SelectorProvider provider;
        PeerJvm peer;

        @BeforeAll
        static void openPeers() throws Exception {
            parity = open(tmp);
        }

        @AfterAll
        static void closePeers() throws Exception {
            if (parity != null) {
                parity.close();
                parity = null;
            }
        }

        @AfterEach
        void closeResources() throws Exception {
            parity.closeResources();
            if (peer != null && peerHoldsConnection()) {
                // One connection at a time in the peer: end this test's, whatever state it is in.
                peer.send("close");
                peer.poll("CLOSED", 2000);
            }
        }

        /** Whether the test left a connection in the peer (to close after it). */
        boolean peerHoldsConnection() {
            return true;
        }

        void on(String transport) throws Exception {
            parity.on(transport);
            provider = parity.provider;
            peer = parity.peer;
        }

        <T extends AutoCloseable> T track(T r) {
            return parity.track(r);
        }
    }

    final ShmNio shm;
    private final PeerJvm shmPeer;
    private final PeerJvm tcpPeer;
    private final Tracked resources = new Tracked();

    /** This JVM's provider for the transport of the test that runs. */
    SelectorProvider provider;
    /** The peer on the same transport. */
    PeerJvm peer;

    private PeerParity(ShmNio shm, PeerJvm shmPeer, PeerJvm tcpPeer) {
        this.shm = shm;
        this.shmPeer = shmPeer;
        this.tcpPeer = tcpPeer;
    }

    static PeerParity open(Path tmp) throws Exception {
        ShmNio shm = ShmNio.open();
        PeerJvm shmPeer = null;
        try {
            shmPeer = PeerJvm.peer(shm.dir, PeerJvm.rules(tmp));
            Path none = tmp.resolve("nothing-routed.rules");
            Files.writeString(none, "# no rule: every connection on the JDK's TCP\n");
            return new PeerParity(shm, shmPeer, PeerJvm.peer(shm.dir, none));
        } catch (Exception | Error e) {
            if (shmPeer != null) {
                shmPeer.close();
            }
            shm.close();
            throw e;
        }
    }

    /** Selects {@code transport} ({@code tcp} or {@code shm}) for this JVM and the peer. */
    void on(String transport) throws Exception {
        if ("tcp".equals(transport)) {
            provider = jdkProvider();
            peer = tcpPeer;
        } else {
            provider = shm.provider;
            peer = shmPeer;
        }
    }

    /** The JDK's own provider (the test JVM does not install rdmanio system-wide; this asks rdmanio for it). */
    static SelectorProvider jdkProvider() throws Exception {
        Method m = RdmaSelectorProvider.class.getDeclaredMethod("jdkProvider");
        m.setAccessible(true);
        return (SelectorProvider) m.invoke(null);
    }

    <T extends AutoCloseable> T track(T r) {
        return resources.track(r);
    }

    /** Closes what the test opened, last first, best effort. */
    void closeResources() {
        resources.closeAll();
    }

    @Override
    public void close() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {tcpPeer, shmPeer, shm}) {
            c.close();
        }
    }
}
