-- event-store-schema.sql for mysql, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- Hand edit (deviation MY-1): DEFAULT CHARSET = utf8mb4 added to every CREATE TABLE that lacked it.
-- Hand edit (deviation MY-3): aggregate_id and aggregate_type pinned to utf8mb4_bin (exact comparison).

-- MySQL / MariaDB
CREATE TABLE IF NOT EXISTS account_event (
    id              CHAR(36)     NOT NULL PRIMARY KEY,
    aggregate_id    VARCHAR(255) CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL,
    aggregate_type  VARCHAR(255) CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL,
    sequence_no     BIGINT       NOT NULL,
    event_type      VARCHAR(255) NOT NULL,
    event_revision  INT          NOT NULL DEFAULT 0,
    payload         LONGTEXT     NOT NULL,
    metadata        LONGTEXT,
    occurred_at     DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    partition_key   SMALLINT     NOT NULL,
    global_position BIGINT       NOT NULL,
    UNIQUE KEY uq_account_event_aggregate_sequence (aggregate_id, sequence_no),
    UNIQUE KEY uq_account_event_global (global_position),
    INDEX idx_account_event_aggregate (aggregate_id, aggregate_type, sequence_no),
    INDEX idx_account_event_partition (partition_key, global_position)
) DEFAULT CHARSET = utf8mb4;
