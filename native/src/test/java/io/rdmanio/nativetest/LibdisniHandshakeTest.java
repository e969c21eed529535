package io.rdmanio.nativetest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.RdmaProvider;
import com.ibm.disni.verbs.impl.NatIbvRecvWR;
import com.ibm.disni.verbs.impl.NatIbvSendWR;
import com.ibm.disni.verbs.impl.NatIbvSge;
import com.ibm.disni.verbs.impl.SockAddrIn;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Host-side checks of libdisni that need no RDMA device: DiSNI 2.1's NativeDispatcher loads
 * the library, accepts its version, and finds the same structure sizes and offsets it was
 * compiled with; a verbs call that cannot succeed here fails with an IOException naming the
 * call and the errno. Skipped (with the reason) when the library was not built.
 *
 * <p>The real verbs path is exercised on soft-RoCE by {@code native/vm/test-disni.sh}.
 */
class LibdisniHandshakeTest {

    // The values DiSNI 2.1's classes carry in their static initializers. NativeDispatcher
    // overwrites them with whatever the library reports, so a mismatch would silently
    // re-lay-out every work request; the library must report exactly these.
    private static final int DISNI_VERSION = 32;
    private static final int SEND_WR_SIZE = 72;
    private static final int RECV_WR_SIZE = 32;
    private static final int SGE_SIZE = 16;
    private static final int WC_SIZE = 48;
    private static final int SOCKADDR_SIZE = 28;
    private static final int REMOTE_ADDR_OFFSET = 40;
    private static final int RKEY_OFFSET = 48;

    private static RdmaProvider provider;

    @BeforeAll
    static void loadLibrary() throws IOException {
        String library = System.getProperty("rdmanio.native.library", "");
        assumeTrue(!library.isEmpty() && Files.isRegularFile(Path.of(library)),
                "libdisni not built (rdma-core development headers missing?): " + library);
        provider = RdmaProvider.provider();
    }

    @Test
    void nativeDispatcherAcceptsTheLibraryVersion() {
        assertEquals(DISNI_VERSION, provider.getVersion());
    }

    @Test
    void layoutsMatchWhatDisniWasCompiledWith() {
        assertEquals(SEND_WR_SIZE, NatIbvSendWR.CSIZE, "send work request size");
        assertEquals(REMOTE_ADDR_OFFSET, NatIbvSendWR.REMOTEADDR_OFFSET, "send wr remote_addr offset");
        assertEquals(RKEY_OFFSET, NatIbvSendWR.RKEY_OFFSET, "send wr rkey offset");
        assertEquals(RECV_WR_SIZE, NatIbvRecvWR.CSIZE, "receive work request size");
        assertEquals(SGE_SIZE, NatIbvSge.CSIZE, "scatter/gather entry size");
        assertEquals(WC_SIZE, IbvWC.CSIZE, "work completion size");
        assertEquals(SOCKADDR_SIZE, SockAddrIn.CSIZE, "socket address size");
    }

    @Test
    void eventChannelOpensOrFailsNamingTheCall() throws IOException {
        if (Files.exists(Path.of("/dev/infiniband/rdma_cm"))) {
            RdmaEventChannel channel = RdmaEventChannel.createEventChannel();
            assertEquals(0, channel.destroyEventChannel());
            return;
        }
        IOException failure = assertThrows(IOException.class, RdmaEventChannel::createEventChannel);
        String message = String.valueOf(failure.getMessage());
        assertTrue(message.startsWith("rdma_create_event_channel: ") && message.contains("(errno "),
                "message should name the call and the errno: " + message);
    }
}
