package io.rdmanio.selector.config;

import java.beans.ConstructorProperties;

/**
 * One row of the JMX connection table ({@link TransportStatsMXBean#getConnections()}); a JMX client sees it as
 * composite data whose items are the getters' names: fabric, local, remote, side, state, bytesWritten, bytesRead,
 * sendCredit, stagedFrames, ageMillis. Immutable.
 */
public final class ConnectionRow {

    private final String fabric;
    private final String local;
    private final String remote;
    private final String side;
    private final String state;
    private final long bytesWritten;
    private final long bytesRead;
    private final long sendCredit;
    private final long stagedFrames;
    private final long ageMillis;

    @ConstructorProperties({"fabric", "local", "remote", "side", "state", "bytesWritten", "bytesRead", "sendCredit",
        "stagedFrames", "ageMillis"})
    public ConnectionRow(String fabric, String local, String remote, String side, String state, long bytesWritten,
            long bytesRead, long sendCredit, long stagedFrames, long ageMillis) {
        this.fabric = fabric;
        this.local = local;
        this.remote = remote;
        this.side = side;
        this.state = state;
        this.bytesWritten = bytesWritten;
        this.bytesRead = bytesRead;
        this.sendCredit = sendCredit;
        this.stagedFrames = stagedFrames;
        this.ageMillis = ageMillis;
    }

    /** The fabric carrying the connection. */
    public String getFabric() {
        return fabric;
    }

    /** The local address, {@code host:port} (empty before it is known). */
    public String getLocal() {
        return local;
    }

    /** The peer's address, {@code host:port}. */
    public String getRemote() {
        return remote;
    }

    /** {@code client} (this end connected) or {@code server} (accepted). */
    public String getSide() {
        return side;
    }

    /** connecting, handshake, open or closed, and what is shut down, closing or failed. */
    public String getState() {
        return state;
    }

    /** Bytes the application wrote. */
    public long getBytesWritten() {
        return bytesWritten;
    }

    /** Bytes the application read. */
    public long getBytesRead() {
        return bytesRead;
    }

    /** Data frames the peer's receive ring has room for now. */
    public long getSendCredit() {
        return sendCredit;
    }

    /** Frames written and waiting for credit. */
    public long getStagedFrames() {
        return stagedFrames;
    }

    /** Milliseconds since the connection was created. */
    public long getAgeMillis() {
        return ageMillis;
    }
}
