package io.rdmanio.core.resolver;

import static io.rdmanio.core.resolver.ResolverPacketDescriptor.*;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Encodes and decodes resolver packets ({@link ResolverPacketDescriptor}), signing and checking them when a key is
 * set. Decoding never trusts a length: every bad packet becomes a {@link BadPacketException} naming the counter it
 * belongs to.
 *
 * <p>Not thread-safe (it holds a {@link Mac}): one instance per thread.
 */
final class ResolverCodec {

    /** A signed packet whose timestamp is further than this from the receiver's clock is stale (a replay). */
    static final long REPLAY_WINDOW_MILLIS = 30_000;

    /** One endpoint record. {@code endpoints} is {@code null} in a WITHDRAW. */
    record Entry(InetSocketAddress address, Endpoints endpoints, long incarnation) {
    }

    /** A decoded packet: the queried addresses of a QUERY, or the records of the other types. */
    record Packet(int type, long nonce, long timestampMillis, List<InetSocketAddress> queried, List<Entry> entries) {
    }

    /** Why a packet was dropped; {@link #counter} is the {@link ResolverStats} name it counts under. */
    static final class BadPacketException extends Exception {
        private static final long serialVersionUID = 1L;
        final String counter;

        BadPacketException(String counter, String message) {
            super(message, null, false, false);
            this.counter = counter;
        }
    }

    private final Mac mac;
    private final byte[] macOut = new byte[MAC_LENGTH];

    ResolverCodec(byte[] key) {
        if (key == null) {
            mac = null;
            return;
        }
        try {
            mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is missing from this JDK", e);
        }
    }

    boolean signing() {
        return mac != null;
    }

    /** Writes a QUERY for {@code addresses[from, from+count)} at position 0 of {@code b}; returns its length. */
    int encodeQuery(ByteBuffer b, long nonce, long now, List<InetSocketAddress> addresses, int from, int count) {
        ensureCount(count, MAX_QUERY_RECORDS);
        putHeader(b, TYPE_QUERY, nonce, now, count);
        for (int i = 0; i < count; i++) {
            int at = HEADER_LENGTH + i * QUERY_RECORD_LENGTH;
            putSocketAddress(b, at + QUERY_ADDRESS_OFFSET, at + QUERY_PORT_OFFSET, addresses.get(from + i));
        }
        return sign(b, HEADER_LENGTH + count * QUERY_RECORD_LENGTH);
    }

    /** Writes an ANSWER, ANNOUNCE or WITHDRAW for {@code entries[from, from+count)}; returns its length. */
    int encodeEntries(ByteBuffer b, int type, long nonce, long now, List<Entry> entries, int from, int count) {
        ensureCount(count, MAX_ENDPOINT_RECORDS);
        putHeader(b, type, nonce, now, count);
        for (int i = 0; i < count; i++) {
            int at = HEADER_LENGTH + i * ENDPOINT_RECORD_LENGTH;
            Entry e = entries.get(from + i);
            Endpoints ep = e.endpoints();
            putSocketAddress(b, at + EP_ADDRESS_OFFSET, at + EP_PORT_OFFSET, e.address());
            b.put(at + EP_FABRICS_OFFSET, (byte) (ep == null ? 0 : ep.fabrics()));
            b.put(at + EP_RESERVED_OFFSET, (byte) 0);
            b.putLong(at + EP_INCARNATION_OFFSET, e.incarnation());
            HostIdentity host = ep == null ? null : ep.shmHost();
            putUuid(b, at + EP_BOOT_ID_OFFSET, host == null ? null : host.bootId());
            b.putLong(at + EP_SHM_DEV_OFFSET, host == null ? 0 : host.shmDirDev());
            b.putLong(at + EP_SHM_INO_OFFSET, host == null ? 0 : host.shmDirIno());
            putSocketAddress(b, at + EP_SHM_ADDRESS_OFFSET, at + EP_SHM_PORT_OFFSET,
                ep == null ? null : ep.shmRendezvous());
            putSocketAddress(b, at + EP_DISNI_ADDRESS_OFFSET, at + EP_DISNI_PORT_OFFSET, ep == null ? null : ep.disni());
            putUuid(b, at + EP_PROCESS_OFFSET, ep == null ? null : ep.loopbackProcess());
        }
        return sign(b, HEADER_LENGTH + count * ENDPOINT_RECORD_LENGTH);
    }

    /**
     * Decodes the {@code length} bytes at position 0 of {@code b}, checking form, signature and (when signed) the
     * timestamp against {@code now}.
     */
    Packet decode(ByteBuffer b, int length, long now) throws BadPacketException {
        if (length > MAX_PACKET) {
            throw new BadPacketException("oversized", length + " bytes, more than " + MAX_PACKET);
        }
        if (length < HEADER_LENGTH) {
            throw new BadPacketException("malformed", length + " bytes, shorter than the " + HEADER_LENGTH
                + "-byte header");
        }
        if (b.getInt(MAGIC_OFFSET) != MAGIC) {
            throw new BadPacketException("malformed", "bad magic " + Integer.toHexString(b.getInt(MAGIC_OFFSET)));
        }
        int version = Byte.toUnsignedInt(b.get(VERSION_OFFSET));
        if (version != VERSION) {
            throw new BadPacketException("malformed", "version " + version + ", this build speaks " + VERSION);
        }
        int type = Byte.toUnsignedInt(b.get(TYPE_OFFSET));
        int recordLength = recordLength(type);
        if (recordLength < 0) {
            throw new BadPacketException("malformed", "unknown type " + type);
        }
        int flags = Byte.toUnsignedInt(b.get(FLAGS_OFFSET));
        if ((flags & ~FLAG_SIGNED) != 0) {
            throw new BadPacketException("malformed", "unknown flags " + Integer.toHexString(flags));
        }
        boolean signed = (flags & FLAG_SIGNED) != 0;
        int count = Byte.toUnsignedInt(b.get(COUNT_OFFSET));
        int expected = packetLength(type, count, signed);
        if (length != expected) {
            throw new BadPacketException("malformed", typeName(type) + " of " + count + " records is " + expected
                + " bytes, got " + length);
        }
        if (mac != null) {
            if (!signed) {
                throw new BadPacketException("unsigned", "unsigned " + typeName(type) + " while a key is set");
            }
            int body = length - MAC_LENGTH;
            computeMac(b, body);
            byte[] got = new byte[MAC_LENGTH];
            for (int i = 0; i < MAC_LENGTH; i++) {
                got[i] = b.get(body + i);
            }
            if (!MessageDigest.isEqual(got, macOut)) {
                throw new BadPacketException("forged", typeName(type) + " with a wrong signature");
            }
            long ts = b.getLong(TIMESTAMP_OFFSET);
            if (Math.abs(now - ts) > REPLAY_WINDOW_MILLIS) {
                throw new BadPacketException("stale", typeName(type) + " timestamped " + (now - ts) + " ms away");
            }
        }
        long nonce = b.getLong(NONCE_OFFSET);
        long ts = b.getLong(TIMESTAMP_OFFSET);
        if (type == TYPE_QUERY) {
            List<InetSocketAddress> q = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                int at = HEADER_LENGTH + i * QUERY_RECORD_LENGTH;
                q.add(getSocketAddress(b, at + QUERY_ADDRESS_OFFSET, at + QUERY_PORT_OFFSET));
            }
            return new Packet(type, nonce, ts, q, List.of());
        }
        List<Entry> entries = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int at = HEADER_LENGTH + i * ENDPOINT_RECORD_LENGTH;
            entries.add(decodeEntry(b, at, type));
        }
        return new Packet(type, nonce, ts, List.of(), entries);
    }

    private static Entry decodeEntry(ByteBuffer b, int at, int type) throws BadPacketException {
        InetSocketAddress address = getSocketAddress(b, at + EP_ADDRESS_OFFSET, at + EP_PORT_OFFSET);
        int fabrics = Byte.toUnsignedInt(b.get(at + EP_FABRICS_OFFSET));
        long incarnation = b.getLong(at + EP_INCARNATION_OFFSET);
        if ((fabrics & ~(Endpoints.FABRIC_SHM | Endpoints.FABRIC_DISNI | Endpoints.FABRIC_LOOPBACK)) != 0) {
            throw new BadPacketException("malformed", "unknown fabric bits " + Integer.toHexString(fabrics));
        }
        if (address.getPort() == 0) {
            throw new BadPacketException("malformed", "a record for port 0");
        }
        if (fabrics == 0) {
            if (type != TYPE_WITHDRAW) {
                throw new BadPacketException("malformed", typeName(type) + " record without a fabric");
            }
            return new Entry(address, null, incarnation);
        }
        HostIdentity host = null;
        InetSocketAddress shm = null;
        if ((fabrics & Endpoints.FABRIC_SHM) != 0) {
            UUID boot = getUuid(b, at + EP_BOOT_ID_OFFSET);
            if (boot == null) {
                // Without a host identity a client could not tell whether it shares the listener's host.
                throw new BadPacketException("malformed", "an shm endpoint without a host identity");
            }
            host = new HostIdentity(boot, b.getLong(at + EP_SHM_DEV_OFFSET), b.getLong(at + EP_SHM_INO_OFFSET));
            shm = getSocketAddress(b, at + EP_SHM_ADDRESS_OFFSET, at + EP_SHM_PORT_OFFSET);
        }
        InetSocketAddress disni = (fabrics & Endpoints.FABRIC_DISNI) == 0 ? null
            : getSocketAddress(b, at + EP_DISNI_ADDRESS_OFFSET, at + EP_DISNI_PORT_OFFSET);
        UUID process = (fabrics & Endpoints.FABRIC_LOOPBACK) == 0 ? null : getUuid(b, at + EP_PROCESS_OFFSET);
        if ((fabrics & Endpoints.FABRIC_LOOPBACK) != 0 && process == null) {
            throw new BadPacketException("malformed", "a loopback endpoint without a process identity");
        }
        Entry e = new Entry(address, new Endpoints(host, shm, disni, process), incarnation);
        return type == TYPE_WITHDRAW ? new Entry(address, null, incarnation) : e;
    }

    private void putHeader(ByteBuffer b, int type, long nonce, long now, int count) {
        b.putInt(MAGIC_OFFSET, MAGIC);
        b.put(VERSION_OFFSET, (byte) VERSION);
        b.put(TYPE_OFFSET, (byte) type);
        b.put(FLAGS_OFFSET, (byte) (mac == null ? 0 : FLAG_SIGNED));
        b.put(COUNT_OFFSET, (byte) count);
        b.putLong(NONCE_OFFSET, nonce);
        b.putLong(TIMESTAMP_OFFSET, now);
    }

    private int sign(ByteBuffer b, int body) {
        if (mac == null) {
            return body;
        }
        computeMac(b, body);
        for (int i = 0; i < MAC_LENGTH; i++) {
            b.put(body + i, macOut[i]);
        }
        return body + MAC_LENGTH;
    }

    private void computeMac(ByteBuffer b, int body) {
        ByteBuffer view = b.duplicate();
        view.position(0).limit(body);
        mac.update(view);
        try {
            mac.doFinal(macOut, 0);
        } catch (javax.crypto.ShortBufferException e) {
            throw new IllegalStateException("the MAC buffer holds " + MAC_LENGTH + " bytes", e);
        }
    }

    private static void ensureCount(int count, int max) {
        if (count < 1 || count > max) {
            throw new IllegalArgumentException("record count " + count + " outside 1.." + max);
        }
    }

    private static void putUuid(ByteBuffer b, int offset, UUID u) {
        b.putLong(offset, u == null ? 0 : u.getMostSignificantBits());
        b.putLong(offset + 8, u == null ? 0 : u.getLeastSignificantBits());
    }

    private static UUID getUuid(ByteBuffer b, int offset) {
        long hi = b.getLong(offset);
        long lo = b.getLong(offset + 8);
        return hi == 0 && lo == 0 ? null : new UUID(hi, lo);
    }
}
