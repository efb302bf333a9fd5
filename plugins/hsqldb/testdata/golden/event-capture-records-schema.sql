-- event-capture-records-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- HSQLDB
CREATE TABLE IF NOT EXISTS EVENT_CAPTURE_RECORDS (
    id              VARCHAR(36)  PRIMARY KEY,
    global_position BIGINT       NOT NULL,
    partition_key   SMALLINT     NOT NULL,
    event_type      VARCHAR(255) NOT NULL,
    event_revision  INT          DEFAULT 0 NOT NULL,
    payload         CLOB         NOT NULL,
    metadata        CLOB,
    occurred_at     TIMESTAMP    NOT NULL,
    message_key     VARCHAR(255),
    UNIQUE (global_position)
);

CREATE INDEX IF NOT EXISTS idx_event_capture_records_partition
    ON EVENT_CAPTURE_RECORDS (partition_key, global_position);

CREATE INDEX IF NOT EXISTS idx_event_capture_records_key
    ON EVENT_CAPTURE_RECORDS (message_key, global_position);
