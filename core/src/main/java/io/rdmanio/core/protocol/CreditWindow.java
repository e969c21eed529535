package io.rdmanio.core.protocol;

/**
 * The credit state of one connection, both directions: what this side may send and what it owes the peer.
 *
 * <h2>Counters</h2>
 * Each direction has two cumulative u64 counters, carried in every frame header: {@code dataCredit}, the data
 * receive slots the receiver has ever made available, and {@code controlCredit}, the control receive slots ever
 * made available. They start at the slot counts of the handshake and only grow. A sender may send DATA while
 * {@code peerDataCredit - dataSent > 0} and a control frame (CREDIT, FIN) while
 * {@code peerControlCredit - controlSent > 0}; the differences are of signed longs that never wrap.
 *
 * <h2>Why two counters</h2>
 * With one counter and a reserve, a ring of depth 1 deadlocks under bidirectional saturation: the grant for a slot
 * consumed by a credit-only frame can only ride on a data frame, and neither side has data credit. A control
 * frame's slot is reposted the moment it completes, so counting control slots apart makes them self-replenishing:
 * a control grant never waits for the application.
 *
 * <h2>When a CREDIT frame is sent</h2>
 * Every frame advertises both counters, so grants normally ride on data. A CREDIT frame is sent only when
 * <ol type="a">
 *   <li>unadvertised data grants reach {@link #creditThreshold()} (half the data window, a sixteenth while the
 *       peer has no data credit left, at least 1) and no data
 *       frame can go the other way to carry them, or there is any such grant, one of them is for a slot freed by
 *       packing an arrived frame onto an unread one ({@link #dataSlotPacked()}), and the peer has no data credit
 *       left as far as this side knows (it could send nothing to pack, and the reader may not read for long);
 *       or</li>
 *   <li>the peer looks control-exhausted (the control credit this side advertised minus the control frames it
 *       received from the peer is {@code <= 0}) and this side has unadvertised control grants. This frame may use
 *       the replenish reserve: one receive beyond the advertised control slots that each side keeps posted, so a
 *       side whose peer is exhausted can always answer, even when both ran out at once.</li>
 * </ol>
 * Control grants alone trigger nothing else. Rule (b) is not tied to this side being write-blocked: a peer that
 * spent its last control credit on CREDIT frames may later need to send FIN, and only this side can give it
 * credit back.
 *
 * <h2>Why this cannot livelock</h2>
 * Every received control frame is reposted at once, so {@code unadvertisedControl = C - peerControlView} where
 * {@code peerControlView} is the peer's control credit as this side sees it. When rule (b) fires the view is
 * {@code <= 0}, so the CREDIT frame advertises at least {@code C >= 2} grants. The peer answers it with its own
 * rule-(b) frame only if this frame used this side's last credit; that answer advertises at least two grants
 * too, after which this side sees the peer holding {@code C - 1 >= 1} credits and stays quiet. So a CREDIT frame
 * answers a CREDIT frame at most once, and a chain of them starts only from a frame the application caused (a
 * read that freed data slots, a FIN, a data frame packed onto an unread one). When nobody reads and nothing more
 * arrives to pack, nothing starts a chain: both sides go quiet.
 *
 * <h2>Why the receiver never overflows</h2>
 * The receiver posts {@code D + C + 1} receives and reposts one for each frame consumed (control at once, data
 * when read). The sender's in-flight frames are at most {@code (peerDataCredit - dataSent) +
 * (peerControlCredit - controlSent) + 1}, and advertised never exceeds granted, so a frame always finds a receive.
 *
 * <p>Not thread-safe: the owning connection guards it with its lock.
 */
public final class CreditWindow {

    /** Which CREDIT frame, if any, is due: see the class comment. */
    public static final int NONE = 0;
    public static final int CREDIT_FOR_DATA = 1;
    public static final int CREDIT_REPLENISH = 2;

    private final int localDataSlots;
    private final int localControlSlots;
    private final int peerDataSlots;
    private final int peerControlSlots;

    // What this side grants.
    private long dataGranted;
    private long controlGranted;
    private long dataAdvertised;
    private long controlAdvertised;
    private long dataReceived;
    private long controlReceived;
    /** Some unadvertised data grant is for a slot freed by packing, not by a read (rule a). */
    private boolean packedGrant;

    // What the peer grants.
    private long peerDataCredit;
    private long peerControlCredit;
    private long dataSent;
    private long controlSent;

    /**
     * @param localDataSlots    D of this side (its initial data advertisement)
     * @param localControlSlots C of this side
     * @param peerDataSlots     the peer's D, from its handshake
     * @param peerControlSlots  the peer's C, from its handshake
     */
    public CreditWindow(int localDataSlots, int localControlSlots, int peerDataSlots, int peerControlSlots) {
        if (localDataSlots < 1 || peerDataSlots < 1) {
            throw new IllegalArgumentException("data slots must be at least 1: " + localDataSlots + ", "
                + peerDataSlots);
        }
        if (localControlSlots < HandshakeDescriptor.MIN_CONTROL_SLOTS
            || peerControlSlots < HandshakeDescriptor.MIN_CONTROL_SLOTS) {
            throw new IllegalArgumentException("control slots must be at least "
                + HandshakeDescriptor.MIN_CONTROL_SLOTS + ": " + localControlSlots + ", " + peerControlSlots);
        }
        this.localDataSlots = localDataSlots;
        this.localControlSlots = localControlSlots;
        this.peerDataSlots = peerDataSlots;
        this.peerControlSlots = peerControlSlots;
        dataGranted = dataAdvertised = localDataSlots;
        controlGranted = controlAdvertised = localControlSlots;
        peerDataCredit = peerDataSlots;
        peerControlCredit = peerControlSlots;
    }

    /** Receives this side keeps posted: data, control, and the one replenish reserve. */
    public static int postedReceives(int dataSlots, int controlSlots) {
        return dataSlots + controlSlots + 1;
    }

    /** The peer's data receive slots (its D, from its handshake): its whole data window, in frames. */
    public int peerDataSlots() {
        return peerDataSlots;
    }

    /** Data frames the peer has room for now. */
    public long dataCredit() {
        return peerDataCredit - dataSent;
    }

    public boolean canSendData() {
        return peerDataCredit - dataSent > 0;
    }

    /** Whether an ordinary control frame (FIN, CREDIT for data) may be sent. */
    public boolean canSendControl() {
        return peerControlCredit - controlSent > 0;
    }

    /**
     * Records a frame about to be posted and advertises everything granted so far: the caller writes
     * {@link #dataGranted()} and {@link #controlGranted()} into its header after this call.
     */
    public void onSend(int type) {
        if (type == FrameDescriptor.TYPE_DATA) {
            dataSent++;
        } else {
            controlSent++;
        }
        dataAdvertised = dataGranted;
        controlAdvertised = controlGranted;
        packedGrant = false;
    }

    /**
     * Applies the credits of a received, well-formed header. A control frame's slot counts as reposted at once
     * (the caller reposts it); a data frame's slot is granted later by {@link #dataSlotsFreed}.
     *
     * @return {@code null}, or a sentence naming the counter and its values if the peer broke a rule
     */
    public String onReceive(int type, long dataCredit, long controlCredit) {
        if (dataCredit < peerDataCredit) {
            return "dataCredit went backwards (" + peerDataCredit + " -> " + dataCredit + ")";
        }
        if (controlCredit < peerControlCredit) {
            return "controlCredit went backwards (" + peerControlCredit + " -> " + controlCredit + ")";
        }
        if (dataCredit - dataSent > peerDataSlots) {
            return "dataCredit " + dataCredit + " exceeds what the peer can have granted (" + dataSent
                + " data frames sent + " + peerDataSlots + " slots)";
        }
        if (controlCredit - controlSent > peerControlSlots) {
            return "controlCredit " + controlCredit + " exceeds what the peer can have granted (" + controlSent
                + " control frames sent + " + peerControlSlots + " slots)";
        }
        if (type == FrameDescriptor.TYPE_DATA) {
            if (dataReceived - dataAdvertised >= 0) {
                return "DATA frame beyond the data credit advertised (" + dataAdvertised + ")";
            }
            dataReceived++;
        } else {
            // The replenish reserve allows one control frame beyond the advertisement.
            if (controlReceived - controlAdvertised > 0) {
                return "control frame beyond the control credit advertised (" + controlAdvertised + " + 1 reserve)";
            }
            controlReceived++;
            controlGranted++;
        }
        peerDataCredit = dataCredit;
        peerControlCredit = controlCredit;
        return null;
    }

    /** Data slots the application has finished with and that were reposted. */
    public void dataSlotsFreed(int n) {
        dataGranted += n;
    }

    /**
     * A data slot whose frame was copied onto the end of an unread one and reposted before the application read
     * anything: granted as {@link #dataSlotsFreed} does, and advertised at once if the peer has no data credit left.
     */
    public void dataSlotPacked() {
        dataGranted++;
        packedGrant = true;
    }

    /** Whether a grant from packing waits while the peer, as far as this side knows, can send no data frame. */
    public boolean packedGrantDue() {
        return packedGrant && dataGranted - dataAdvertised > 0 && dataAdvertised - dataReceived <= 0;
    }

    /**
     * Unadvertised data grants that justify a CREDIT frame: half the data window; a sixteenth once the peer has
     * spent every data credit this side advertised (as far as this side knows: it is waiting), as a TCP receiver
     * reopens a closed window as soon as a segment's worth is free rather than half its buffer. At least 1.
     */
    public int creditThreshold() {
        int slots = dataAdvertised - dataReceived <= 0 ? localDataSlots / 16 : localDataSlots / 2;
        return Math.max(1, slots);
    }

    /**
     * Which CREDIT frame is due now, if any.
     *
     * @param dataCanGo whether a DATA frame is about to be posted (it will carry every grant)
     */
    public int creditDue(boolean dataCanGo) {
        if (peerLooksExhausted() && controlGranted - controlAdvertised > 0 && peerControlCredit - controlSent >= 0) {
            return CREDIT_REPLENISH;
        }
        if (!dataCanGo && (dataGranted - dataAdvertised >= creditThreshold() || packedGrantDue()) && canSendControl()) {
            return CREDIT_FOR_DATA;
        }
        return NONE;
    }

    /** Whether the peer, as far as this side knows, has no control credit left. */
    public boolean peerLooksExhausted() {
        return controlAdvertised - controlReceived <= 0;
    }

    public long dataGranted() {
        return dataGranted;
    }

    public long controlGranted() {
        return controlGranted;
    }

    public long unadvertisedData() {
        return dataGranted - dataAdvertised;
    }

    public long unadvertisedControl() {
        return controlGranted - controlAdvertised;
    }

    public long dataSent() {
        return dataSent;
    }

    public long controlSent() {
        return controlSent;
    }

    public long peerDataCredit() {
        return peerDataCredit;
    }

    public long peerControlCredit() {
        return peerControlCredit;
    }

    public int localDataSlots() {
        return localDataSlots;
    }

    public int localControlSlots() {
        return localControlSlots;
    }

    @Override
    public String toString() {
        return "credit[sent " + dataSent + "/" + peerDataCredit + " data, " + controlSent + "/" + peerControlCredit
            + " control; granted " + dataGranted + " (adv " + dataAdvertised + ") data, " + controlGranted + " (adv "
            + controlAdvertised + ") control]";
    }
}
