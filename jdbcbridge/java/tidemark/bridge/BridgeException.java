package tidemark.bridge;

/**
 * A refusal by the bridge itself, reported to the client with its own SQLSTATE: 22021 for text
 * that is not valid UTF-8 (either direction), 54000 for a request or result over the per-request
 * limit, HY001 when the JVM ran out of memory.
 */
final class BridgeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** SQLSTATE sent to the client. */
    final String state;

    BridgeException(String state, String message) {
        super(message, null, false, false);
        this.state = state;
    }

    /** SQLSTATE 22021 character_not_in_repertoire. */
    static final String INVALID_TEXT = "22021";
    /** SQLSTATE 54000 program_limit_exceeded. */
    static final String TOO_LARGE = "54000";
    /** SQLSTATE HY001 memory allocation error (SQL/CLI). */
    static final String OUT_OF_MEMORY = "HY001";
}
