package io.rdmanio.core.resolver;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

/**
 * Layout of a resolver datagram: a 24-byte header, {@code count} fixed-size records, and, when the packet is signed,
 * a 32-byte HMAC-SHA256 trailer over everything before it. Big-endian (network order).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                     magic 0x52445253 "RDRS"                   |  0
 *  +---------------+---------------+---------------+---------------+
 *  |    version    |     type      |     flags     |     count     |  4
 *  +---------------+---------------+---------------+---------------+
 *  |                             nonce                             |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  timestamp (ms since the epoch)               | 16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                 count records (QUERY: 18 bytes,               | 24
 *  |                 ANSWER/ANNOUNCE/WITHDRAW: 112 bytes)          |
 *  +---------------------------------------------------------------+
 *  |         HMAC-SHA256 of bytes [0, 24 + records) (if signed)    |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>Address record (QUERY): IP address as 16 bytes (IPv4 as an IPv4-mapped IPv6 address) at 0, port (u16) at 16.
 *
 * <p>Endpoint record (ANSWER, ANNOUNCE, WITHDRAW):
 * <pre>
 *    0  address[16]      the logical address a client connects to
 *   16  port u16
 *   18  fabrics u8       bit 0 shm, bit 1 disni, bit 2 loopback; 0 = not served (WITHDRAW)
 *   19  reserved u8      zero
 *   20  incarnation u64  the listener's; a restarted listener has a larger one
 *   28  bootId[16]       shm: the kernel boot id of the listener's host
 *   44  shmDirDev u64    shm: device of the shm directory
 *   52  shmDirIno u64    shm: inode of the shm directory
 *   60  shmAddress[16]   shm: the address the listener's rendezvous socket is named after
 *   76  shmPort u16
 *   78  disniAddress[16] disni: the address of the RDMA interface
 *   94  disniPort u16
 *   96  process[16]      loopback: the listener JVM's random identity
 *  112  end
 * </pre>
 *
 * <p>A packet is exactly {@code 24 + count * recordLength (+ 32 if signed)} bytes and at most {@link #MAX_PACKET};
 * anything else is malformed. Stateless and thread-safe.
 */
public final class ResolverPacketDescriptor {

    public static final int MAGIC = 0x52445253;
    public static final int VERSION = 1;

    public static final int TYPE_QUERY = 1;
    public static final int TYPE_ANSWER = 2;
    public static final int TYPE_ANNOUNCE = 3;
    public static final int TYPE_WITHDRAW = 4;

    /** Header flag: an HMAC-SHA256 trailer follows the records. */
    public static final int FLAG_SIGNED = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int TYPE_OFFSET = 5;
    public static final int FLAGS_OFFSET = 6;
    public static final int COUNT_OFFSET = 7;
    public static final int NONCE_OFFSET = 8;
    public static final int TIMESTAMP_OFFSET = 16;
    public static final int HEADER_LENGTH = 24;

    public static final int ADDRESS_LENGTH = 16;

    public static final int QUERY_ADDRESS_OFFSET = 0;
    public static final int QUERY_PORT_OFFSET = 16;
    public static final int QUERY_RECORD_LENGTH = 18;

    public static final int EP_ADDRESS_OFFSET = 0;
    public static final int EP_PORT_OFFSET = 16;
    public static final int EP_FABRICS_OFFSET = 18;
    public static final int EP_RESERVED_OFFSET = 19;
    public static final int EP_INCARNATION_OFFSET = 20;
    public static final int EP_BOOT_ID_OFFSET = 28;
    public static final int EP_SHM_DEV_OFFSET = 44;
    public static final int EP_SHM_INO_OFFSET = 52;
    public static final int EP_SHM_ADDRESS_OFFSET = 60;
    public static final int EP_SHM_PORT_OFFSET = 76;
    public static final int EP_DISNI_ADDRESS_OFFSET = 78;
    public static final int EP_DISNI_PORT_OFFSET = 94;
    public static final int EP_PROCESS_OFFSET = 96;
    public static final int ENDPOINT_RECORD_LENGTH = 112;

    public static final int MAC_LENGTH = 32;

    /** Largest packet sent or accepted: fits one 1500-byte Ethernet frame with IPv6 and UDP headers. */
    public static final int MAX_PACKET = 1400;

    /** Most addresses one QUERY carries (74). */
    public static final int MAX_QUERY_RECORDS = (MAX_PACKET - HEADER_LENGTH - MAC_LENGTH) / QUERY_RECORD_LENGTH;
    /** Most endpoint records one ANSWER, ANNOUNCE or WITHDRAW carries (12). */
    public static final int MAX_ENDPOINT_RECORDS = (MAX_PACKET - HEADER_LENGTH - MAC_LENGTH) / ENDPOINT_RECORD_LENGTH;

    static {
        if (MAX_QUERY_RECORDS > 255 || MAX_ENDPOINT_RECORDS > 255 || MAX_ENDPOINT_RECORDS < 1) {
            throw new ExceptionInInitializerError("record counts must fit the u8 count field: query "
                + MAX_QUERY_RECORDS + ", endpoint " + MAX_ENDPOINT_RECORDS);
        }
    }

    private ResolverPacketDescriptor() {
    }

    /** The record length of packets of {@code type}, or -1 for an unknown type. */
    public static int recordLength(int type) {
        switch (type) {
            case TYPE_QUERY:
                return QUERY_RECORD_LENGTH;
            case TYPE_ANSWER:
            case TYPE_ANNOUNCE:
            case TYPE_WITHDRAW:
                return ENDPOINT_RECORD_LENGTH;
            default:
                return -1;
        }
    }

    /** The exact length of a packet of {@code type} with {@code count} records. */
    public static int packetLength(int type, int count, boolean signed) {
        return HEADER_LENGTH + count * recordLength(type) + (signed ? MAC_LENGTH : 0);
    }

    public static String typeName(int type) {
        switch (type) {
            case TYPE_QUERY:
                return "QUERY";
            case TYPE_ANSWER:
                return "ANSWER";
            case TYPE_ANNOUNCE:
                return "ANNOUNCE";
            case TYPE_WITHDRAW:
                return "WITHDRAW";
            default:
                return "type " + type;
        }
    }

    /** Writes {@code address} as 16 bytes at {@code offset}: IPv4 as ::ffff:a.b.c.d, {@code null} as zeros. */
    static void putAddress(ByteBuffer b, int offset, InetAddress address) {
        if (address == null) {
            for (int i = 0; i < ADDRESS_LENGTH; i++) {
                b.put(offset + i, (byte) 0);
            }
            return;
        }
        byte[] raw = address.getAddress();
        if (raw.length == 4) {
            for (int i = 0; i < 10; i++) {
                b.put(offset + i, (byte) 0);
            }
            b.put(offset + 10, (byte) 0xff);
            b.put(offset + 11, (byte) 0xff);
            for (int i = 0; i < 4; i++) {
                b.put(offset + 12 + i, raw[i]);
            }
        } else {
            for (int i = 0; i < ADDRESS_LENGTH; i++) {
                b.put(offset + i, raw[i]);
            }
        }
    }

    /** Reads 16 bytes at {@code offset}: an IPv4-mapped address becomes an {@link Inet4Address}. */
    static InetAddress getAddress(ByteBuffer b, int offset) {
        byte[] raw = new byte[ADDRESS_LENGTH];
        for (int i = 0; i < ADDRESS_LENGTH; i++) {
            raw[i] = b.get(offset + i);
        }
        try {
            // The JDK turns an IPv4-mapped 16-byte address into an Inet4Address itself.
            return InetAddress.getByAddress(raw);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("16 bytes are always an address", e);
        }
    }

    static void putSocketAddress(ByteBuffer b, int addressOffset, int portOffset, InetSocketAddress a) {
        putAddress(b, addressOffset, a == null ? null : a.getAddress());
        b.putShort(portOffset, (short) (a == null ? 0 : a.getPort()));
    }

    static InetSocketAddress getSocketAddress(ByteBuffer b, int addressOffset, int portOffset) {
        return new InetSocketAddress(getAddress(b, addressOffset), Short.toUnsignedInt(b.getShort(portOffset)));
    }
}
