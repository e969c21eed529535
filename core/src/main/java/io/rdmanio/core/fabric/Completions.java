package io.rdmanio.core.fabric;

/**
 * A reusable batch of work completions, filled by {@link CompletionQueue#poll(Completions)}: parallel arrays so
 * that polling never allocates.
 *
 * <p>Not thread-safe: one poller owns a batch.
 */
public final class Completions {

    /* Opcodes, as in ibv_wc_opcode. */
    public static final int OP_SEND = 0;
    public static final int OP_RECV = 128;

    /* Statuses, numbered as ibv_wc_status so the disni fabric maps them one to one. */
    public static final int SUCCESS = 0;
    public static final int LOC_LEN_ERR = 1;
    public static final int LOC_QP_OP_ERR = 2;
    public static final int LOC_PROT_ERR = 4;
    public static final int WR_FLUSH_ERR = 5;
    public static final int LOC_ACCESS_ERR = 8;
    public static final int REM_INV_REQ_ERR = 9;
    public static final int REM_ACCESS_ERR = 10;
    public static final int REM_OP_ERR = 11;
    public static final int RETRY_EXC_ERR = 12;
    public static final int RNR_RETRY_EXC_ERR = 13;
    public static final int GENERAL_ERR = 21;

    public final long[] wrId;
    public final int[] status;
    public final int[] opcode;
    public final int[] byteLen;
    /** The {@link QueuePair#qpNum()} of the queue pair the completion belongs to. */
    public final int[] qpNum;
    private int count;

    public Completions(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        wrId = new long[capacity];
        status = new int[capacity];
        opcode = new int[capacity];
        byteLen = new int[capacity];
        qpNum = new int[capacity];
    }

    public int capacity() {
        return wrId.length;
    }

    /** The number of completions the last poll returned. */
    public int count() {
        return count;
    }

    /** Set by a fabric's poll. */
    public void count(int n) {
        count = n;
    }

    /** A name for a status value, for error messages. */
    public static String statusName(int status) {
        switch (status) {
            case SUCCESS: return "success";
            case LOC_LEN_ERR: return "local length error (a message larger than the posted receive)";
            case LOC_QP_OP_ERR: return "local queue-pair operation error";
            case LOC_PROT_ERR: return "local protection error (memory outside a registered region or wrong lkey)";
            case WR_FLUSH_ERR: return "work request flushed (queue pair in error state)";
            case LOC_ACCESS_ERR: return "local access error";
            case REM_INV_REQ_ERR: return "remote invalid request";
            case REM_ACCESS_ERR: return "remote access error (outside the peer's region or wrong rkey)";
            case REM_OP_ERR: return "remote operation error";
            case RETRY_EXC_ERR: return "transport retry counter exceeded (peer unreachable)";
            case RNR_RETRY_EXC_ERR: return "receiver not ready (a send arrived where no receive was posted)";
            case GENERAL_ERR: return "general error";
            default: return "status " + status;
        }
    }
}
