package io.rdmanio.core.fabric.disni.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmanio.core.fabric.CmId;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** The in-band setup message: private data of every allowed length round-trips; nothing else passes for one. */
class SetupDescriptorTest {

    @Test
    void privateDataOfEveryLengthRoundTrips() {
        int at = SetupDescriptor.LENGTH;
        ByteBuffer b = ByteBuffer.allocate(2 * SetupDescriptor.LENGTH).order(SetupDescriptor.ORDER);
        for (int n = 0; n <= CmId.MAX_PRIVATE_DATA; n++) {
            byte[] payload = new byte[n];
            for (int i = 0; i < n; i++) {
                payload[i] = (byte) (n * 13 + i);
            }
            SetupDescriptor.write(b, at, SetupDescriptor.ACCEPT, ByteBuffer.wrap(payload));
            ByteBuffer received = ByteBuffer.allocate(SetupDescriptor.LENGTH).order(SetupDescriptor.ORDER);
            received.put(0, b, at, SetupDescriptor.LENGTH);
            assertEquals(SetupDescriptor.ACCEPT, SetupDescriptor.kind(received, 0, SetupDescriptor.LENGTH));
            ByteBuffer data = SetupDescriptor.data(received, 0);
            assertEquals(ByteBuffer.wrap(payload), data);
            assertTrue(data.isReadOnly());
        }
    }

    @Test
    void aShortMessageABadMagicOrAnUnknownKindIsNotASetupMessage() {
        ByteBuffer b = ByteBuffer.allocate(SetupDescriptor.LENGTH).order(SetupDescriptor.ORDER);
        SetupDescriptor.write(b, 0, SetupDescriptor.REQUEST, ByteBuffer.wrap(new byte[] {1, 2, 3}));
        assertEquals(SetupDescriptor.REQUEST, SetupDescriptor.kind(b, 0, SetupDescriptor.LENGTH));
        assertEquals(0, SetupDescriptor.kind(b, 0, SetupDescriptor.LENGTH - 1));
        b.put(SetupDescriptor.KIND_OFFSET, (byte) 9);
        assertEquals(0, SetupDescriptor.kind(b, 0, SetupDescriptor.LENGTH));
        b.put(SetupDescriptor.KIND_OFFSET, SetupDescriptor.REQUEST);
        b.put(SetupDescriptor.DATA_LENGTH_OFFSET, (byte) (CmId.MAX_PRIVATE_DATA + 1));
        assertEquals(0, SetupDescriptor.kind(b, 0, SetupDescriptor.LENGTH));
        b.put(SetupDescriptor.DATA_LENGTH_OFFSET, (byte) 3);
        b.putInt(SetupDescriptor.MAGIC_OFFSET, 0);
        assertEquals(0, SetupDescriptor.kind(b, 0, SetupDescriptor.LENGTH));
    }
}
