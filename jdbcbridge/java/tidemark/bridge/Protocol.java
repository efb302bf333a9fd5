package tidemark.bridge;

/**
 * Wire protocol constants shared with the Go driver (jdbcbridge/proto.go).
 *
 * <p>Every frame is {@code u32 length} followed by {@code length} bytes. A request body is
 * {@code u32 requestId, u8 op, payload}; a response body is {@code u32 requestId, u8 status,
 * payload}. All integers are big-endian; strings are {@code i32 byteLength} (-1 = null) followed
 * by UTF-8 bytes.
 */
final class Protocol {
    private Protocol() {}

    /** Protocol version exchanged in HELLO. */
    static final int VERSION = 1;

    /** Largest frame accepted before the HELLO handshake has succeeded. */
    static final int MAX_FRAME_UNAUTHENTICATED = 64 * 1024;
    /** Default per-request limit (--max-request-bytes): the largest request or response frame. */
    static final int DEFAULT_MAX_REQUEST = 256 * 1024 * 1024;

    // Operations.
    static final int OP_HELLO = 1;
    static final int OP_OPEN = 2;
    static final int OP_PREPARE = 3;
    static final int OP_EXECUTE = 4;
    static final int OP_FETCH = 5;
    static final int OP_CLOSE_CURSOR = 6;
    static final int OP_CLOSE_STMT = 7;
    static final int OP_BEGIN = 8;
    static final int OP_COMMIT = 9;
    static final int OP_ROLLBACK = 10;
    static final int OP_CANCEL = 11;
    static final int OP_PING = 12;
    static final int OP_RESET = 13;
    static final int OP_LOB_READ = 14;
    static final int OP_LOB_FREE = 15;
    static final int OP_CLOSE = 16;
    /**
     * Test-only: refused as an unknown op unless the server runs with
     * -Dtidemark.bridge.testHooks=true (see StaleWaits); production never sets it.
     */
    static final int OP_TEST_HOOK = 200;
    /** Internal: stands in for a request frame over the limit that was skipped unread. */
    static final int OP_TOO_LARGE = 255;

    // Response status.
    static final int STATUS_OK = 0;
    static final int STATUS_ERROR = 1;

    // EXECUTE flags.
    static final int FLAG_GENERATED_KEYS = 1;

    // EXECUTE result kinds.
    static final int RESULT_UPDATE = 0;
    static final int RESULT_ROWS = 1;

    // Value tags.
    static final int T_NULL = 0;
    static final int T_BOOL = 1;
    static final int T_INT64 = 2;
    static final int T_DOUBLE = 3;
    static final int T_DECIMAL = 4;
    static final int T_STRING = 5;
    static final int T_BYTES = 6;
    static final int T_DATE = 7;
    static final int T_TIME = 8;
    static final int T_TIMESTAMP = 9;
    static final int T_TIMESTAMPTZ = 10;
    static final int T_UUID = 11;
    static final int T_CLOB = 12;
    static final int T_BLOB = 13;

    /** LOBs up to this many bytes/chars are sent inline as STRING/BYTES. */
    static final int LOB_INLINE_LIMIT = 256 * 1024;
    /** A row batch stops growing once its encoding exceeds this many bytes. */
    static final int BATCH_BYTES = 4 * 1024 * 1024;

    // Bridge-level SQLSTATEs.
    static final String STATE_PROTOCOL = "08P01";
    static final String STATE_REJECTED = "08004";
    static final String STATE_AUTH = "28000";
    static final String STATE_CANCELED = "57014";
    static final String STATE_GENERAL = "HY000";
}
