-- read-model-topic-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- HSQLDB
CREATE TABLE IF NOT EXISTS READ_MODEL_CAPTURE_POSITIONS (
    topic       VARCHAR(255) NOT NULL PRIMARY KEY,
    val         BIGINT       NOT NULL
);

CREATE TABLE IF NOT EXISTS READ_MODEL_CAPTURE_RECORDS (
    id                  VARCHAR(36)  PRIMARY KEY,
    topic               VARCHAR(255) NOT NULL,
    topic_position      BIGINT       NOT NULL,
    partition_key       SMALLINT     NOT NULL,
    read_model_key      VARCHAR(255) NOT NULL,
    read_model_type     VARCHAR(255) NOT NULL,
    read_model_revision INT          DEFAULT 0 NOT NULL,
    payload             LONGVARCHAR  NOT NULL,
    metadata            LONGVARCHAR,
    cascade_depth       INT          NOT NULL,
    deleted             BOOLEAN      NOT NULL,
    occurred_at         TIMESTAMP    NOT NULL,
    CONSTRAINT uq_read_model_capture_records_position UNIQUE (topic, topic_position)
);

CREATE INDEX IF NOT EXISTS idx_read_model_capture_records_partition
    ON READ_MODEL_CAPTURE_RECORDS (topic, partition_key, topic_position);

CREATE INDEX IF NOT EXISTS idx_read_model_capture_records_key
    ON READ_MODEL_CAPTURE_RECORDS (topic, read_model_key, topic_position);
