-- event-capture-records-schema.sql for sqlite: Tidemark's own mapping of the spec's H2/PostgreSQL DDL (SQLite is not in the spec).
-- Written by hand; see docs/spec-deviations.md, section SQLite.

-- SQLite
CREATE TABLE IF NOT EXISTS EVENT_CAPTURE_RECORDS (
    id              CHAR(36)     NOT NULL PRIMARY KEY,
    global_position BIGINT       NOT NULL,
    partition_key   SMALLINT     NOT NULL,
    event_type      VARCHAR(255) NOT NULL,
    event_revision  INT          NOT NULL DEFAULT 0,
    payload         TEXT         NOT NULL,
    metadata        TEXT,
    occurred_at     TIMESTAMP    NOT NULL,
    message_key     VARCHAR(255),
    UNIQUE (global_position)
);

CREATE INDEX IF NOT EXISTS idx_event_capture_records_partition
    ON EVENT_CAPTURE_RECORDS (partition_key, global_position);

CREATE INDEX IF NOT EXISTS idx_event_capture_records_key
    ON EVENT_CAPTURE_RECORDS (message_key, global_position);
