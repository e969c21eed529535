package io.rdmanio.core.protocol;

import static io.rdmanio.core.protocol.HandshakeDescriptor.*;
import static org.junit.jupiter.api.Assertions.*;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class HandshakeDescriptorTest {

    @Test
    void roundTrips() {
        ByteBuffer b = allocate(VERSION, REASON_NONE, 16384, 32, 2, 0x1122334455667788L);
        assertEquals(LENGTH, b.remaining());
        assertEquals(MAGIC, magic(b, 0));
        assertEquals(VERSION, version(b, 0));
        assertEquals(REASON_NONE, reason(b, 0));
        assertEquals(16384, slotSize(b, 0));
        assertEquals(32, dataSlots(b, 0));
        assertEquals(2, controlSlots(b, 0));
        assertEquals(0x1122334455667788L, incarnation(b, 0));
        assertEquals('R', b.get(0));
        assertEquals(REASON_NONE, check(b, 0, LENGTH, 16384));
    }

    @Test
    void eachRuleHasAReason() {
        assertEquals(REASON_MALFORMED, check(allocate(VERSION, 0, 16384, 32, 2, 1), 0, LENGTH - 1, 16384));
        ByteBuffer bad = allocate(VERSION, 0, 16384, 32, 2, 1);
        bad.putInt(0, 7);
        assertEquals(REASON_BAD_MAGIC, check(bad, 0, LENGTH, 16384));
        assertEquals(REASON_VERSION, check(allocate(1, 0, 16384, 32, 2, 1), 0, LENGTH, 16384));
        assertEquals(REASON_SLOT_SIZE, check(allocate(VERSION, 0, 4096, 32, 2, 1), 0, LENGTH, 16384));
        assertEquals(REASON_SLOT_COUNT, check(allocate(VERSION, 0, 16384, 0, 2, 1), 0, LENGTH, 16384));
        assertEquals(REASON_SLOT_COUNT, check(allocate(VERSION, 0, 16384, 32, 1, 1), 0, LENGTH, 16384));
        ByteBuffer reserved = allocate(VERSION, 0, 16384, 32, 2, 1);
        reserved.putInt(RESERVED_OFFSET, 5);
        assertEquals(REASON_MALFORMED, check(reserved, 0, LENGTH, 16384));
    }

    @Test
    void rejectionNamesBothValues() {
        InetSocketAddress server = new InetSocketAddress("127.0.0.1", 5555);
        ByteBuffer request = allocate(1, 0, 16384, 32, 2, 1);
        ByteBuffer reject = allocate(VERSION, REASON_VERSION, 16384, 32, 2, 9);
        assertEquals("rdmanio handshake rejected by /127.0.0.1:5555: protocol version 1 not supported (server speaks 2)",
            describeRejection(server, reject, request));
        request = allocate(VERSION, 0, 4096, 32, 2, 1);
        reject = allocate(VERSION, REASON_SLOT_SIZE, 16384, 32, 2, 9);
        assertEquals("rdmanio handshake rejected by /127.0.0.1:5555: slot size 4096 not accepted (server uses 16384)",
            describeRejection(server, reject, request));
        assertEquals("protocol version 1 not supported (this side speaks 2)",
            describe(REASON_VERSION, allocate(1, 0, 16384, 32, 2, 1), 0, LENGTH, 16384));
    }

    @Test
    void aRejectionForALimitNamesItInTheClientsMessage() {
        ByteBuffer request = allocate(VERSION, REASON_NONE, 65536, 32, 4, 7);
        ByteBuffer reject = allocateRejection(REASON_LIMIT, 65536, 32, 4, "open files 1024 and more words", 24);
        assertEquals(LENGTH + 24, reject.remaining());
        assertEquals("open files 1024 and more", limitDetail(reject));
        String message = describeRejection(new InetSocketAddress("127.0.0.1", 9), reject, request);
        assertTrue(message.contains("reached a limit: open files 1024 and more"), message);
        // Without a detail, the old reasons read as before.
        ByteBuffer full = allocateRejection(REASON_NO_RESOURCES, 65536, 32, 4, null, 24);
        assertEquals(LENGTH, full.remaining());
        assertNull(limitDetail(full));
        assertTrue(describeRejection(new InetSocketAddress("127.0.0.1", 9), full, request)
            .contains("accept queue is full"));
    }
}
