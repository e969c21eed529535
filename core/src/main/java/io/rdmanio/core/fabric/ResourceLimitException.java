package io.rdmanio.core.fabric;

/**
 * A fabric object could not be created because a limit of the process or the machine was reached (descriptors,
 * mappings, registered or shared memory, a table of the fabric): the message says which and how to raise it, and
 * {@link #limit()} names it in a few words, short enough to travel in a connection-manager rejection so that a
 * refused peer learns the reason too.
 */
public class ResourceLimitException extends FabricException {
    private static final long serialVersionUID = 1L;

    /** Most bytes of {@link #limit()}: what a rejection's private data has room for after the handshake. */
    public static final int MAX_LIMIT_LENGTH = 24;

    private final String limit;

    /**
     * @param limit the limit in a few ASCII words ("open files 1024", "shm regions 65536"); cut to
     *              {@link #MAX_LIMIT_LENGTH} characters
     */
    public ResourceLimitException(String limit, String message, Throwable cause) {
        super(message, cause);
        this.limit = limit.length() > MAX_LIMIT_LENGTH ? limit.substring(0, MAX_LIMIT_LENGTH) : limit;
    }

    public String limit() {
        return limit;
    }
}
