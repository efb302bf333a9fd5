-- read-model-topic-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF OBJECT_ID(N'READ_MODEL_CAPTURE_POSITIONS', N'U') IS NULL
    CREATE TABLE READ_MODEL_CAPTURE_POSITIONS (
        topic       NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL PRIMARY KEY,
        val         BIGINT NOT NULL
    );

IF OBJECT_ID(N'READ_MODEL_CAPTURE_RECORDS', N'U') IS NULL
    CREATE TABLE READ_MODEL_CAPTURE_RECORDS (
        id                  VARCHAR(36)   NOT NULL PRIMARY KEY,
        topic               NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
        topic_position      BIGINT        NOT NULL,
        partition_key       SMALLINT      NOT NULL,
        read_model_key      NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
        read_model_type     NVARCHAR(255) NOT NULL,
        read_model_revision INT           NOT NULL DEFAULT 0,
        payload             NVARCHAR(MAX) NOT NULL,
        metadata            NVARCHAR(MAX),
        cascade_depth       INT           NOT NULL,
        deleted             BIT           NOT NULL,
        occurred_at         DATETIME2     NOT NULL,
        CONSTRAINT uq_read_model_capture_records_position UNIQUE (topic, topic_position)
    );

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_read_model_capture_records_partition'
               AND object_id = OBJECT_ID(N'READ_MODEL_CAPTURE_RECORDS'))
    CREATE INDEX idx_read_model_capture_records_partition
        ON READ_MODEL_CAPTURE_RECORDS (topic, partition_key, topic_position);

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_read_model_capture_records_key'
               AND object_id = OBJECT_ID(N'READ_MODEL_CAPTURE_RECORDS'))
    CREATE INDEX idx_read_model_capture_records_key
        ON READ_MODEL_CAPTURE_RECORDS (topic, read_model_key, topic_position);
