-- read-model-topic-schema.sql for sqlite: Tidemark's own mapping of the spec's H2/PostgreSQL DDL (SQLite is not in the spec).
-- Written by hand; see docs/spec-deviations.md, section SQLite.

-- SQLite
CREATE TABLE IF NOT EXISTS READ_MODEL_CAPTURE_POSITIONS (
    topic       VARCHAR(255) NOT NULL PRIMARY KEY,
    val         BIGINT       NOT NULL
);

CREATE TABLE IF NOT EXISTS READ_MODEL_CAPTURE_RECORDS (
    id                  CHAR(36)     NOT NULL PRIMARY KEY,
    topic               VARCHAR(255) NOT NULL,
    topic_position      BIGINT       NOT NULL,
    partition_key       SMALLINT     NOT NULL,
    read_model_key      VARCHAR(255) NOT NULL,
    read_model_type     VARCHAR(255) NOT NULL,
    read_model_revision INT          NOT NULL DEFAULT 0,
    payload             TEXT         NOT NULL,
    metadata            TEXT,
    cascade_depth       INT          NOT NULL,
    deleted             BOOLEAN      NOT NULL,
    occurred_at         TIMESTAMP    NOT NULL,
    CONSTRAINT uq_read_model_capture_records_position UNIQUE (topic, topic_position)
);

CREATE INDEX IF NOT EXISTS idx_read_model_capture_records_partition
    ON READ_MODEL_CAPTURE_RECORDS (topic, partition_key, topic_position);

CREATE INDEX IF NOT EXISTS idx_read_model_capture_records_key
    ON READ_MODEL_CAPTURE_RECORDS (topic, read_model_key, topic_position);
