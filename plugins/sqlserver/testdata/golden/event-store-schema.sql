-- event-store-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- Hand edit (deviation SS-2): aggregate_id NVARCHAR(510), aggregate_type NVARCHAR(255), both Latin1_General_100_BIN2.

-- SQL Server
IF OBJECT_ID(N'account_event', N'U') IS NULL
    CREATE TABLE account_event (
        id              VARCHAR(36)   NOT NULL PRIMARY KEY,
        aggregate_id    NVARCHAR(510) COLLATE Latin1_General_100_BIN2 NOT NULL,
        aggregate_type  NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
        sequence_no     BIGINT        NOT NULL,
        event_type      VARCHAR(255)  NOT NULL,
        event_revision  INT           NOT NULL DEFAULT 0,
        payload         NVARCHAR(MAX) NOT NULL,
        metadata        NVARCHAR(MAX),
        occurred_at     DATETIME2     NOT NULL DEFAULT SYSUTCDATETIME(),
        partition_key   SMALLINT      NOT NULL,
        global_position BIGINT        NOT NULL,
        CONSTRAINT uq_account_event_sequence UNIQUE (aggregate_id, sequence_no)
    );

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_account_event_aggregate'
               AND object_id = OBJECT_ID(N'account_event'))
    CREATE INDEX idx_account_event_aggregate
        ON account_event (aggregate_id, aggregate_type, sequence_no);

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_account_event_global'
               AND object_id = OBJECT_ID(N'account_event'))
    CREATE INDEX idx_account_event_global
        ON account_event (global_position);

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_account_event_partition'
               AND object_id = OBJECT_ID(N'account_event'))
    CREATE INDEX idx_account_event_partition
        ON account_event (partition_key, global_position);
