-- event-capture-records-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF OBJECT_ID(N'EVENT_CAPTURE_RECORDS', N'U') IS NULL
    CREATE TABLE EVENT_CAPTURE_RECORDS (
        id              VARCHAR(36)   NOT NULL PRIMARY KEY,
        global_position BIGINT        NOT NULL,
        partition_key   SMALLINT      NOT NULL,
        event_type      VARCHAR(255)  NOT NULL,
        event_revision  INT           NOT NULL DEFAULT 0,
        payload         NVARCHAR(MAX) NOT NULL,
        metadata        NVARCHAR(MAX),
        occurred_at     DATETIME2     NOT NULL,
        message_key     NVARCHAR(255) COLLATE Latin1_General_100_BIN2,
        CONSTRAINT uq_event_capture_records_global_position UNIQUE (global_position)
    );

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_event_capture_records_partition'
               AND object_id = OBJECT_ID(N'EVENT_CAPTURE_RECORDS'))
    CREATE INDEX idx_event_capture_records_partition
        ON EVENT_CAPTURE_RECORDS (partition_key, global_position);

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_event_capture_records_key'
               AND object_id = OBJECT_ID(N'EVENT_CAPTURE_RECORDS'))
    CREATE INDEX idx_event_capture_records_key
        ON EVENT_CAPTURE_RECORDS (message_key, global_position);
