-- snapshot-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- Hand edit (deviation SS-2): aggregate_id NVARCHAR(510), aggregate_type NVARCHAR(255), both Latin1_General_100_BIN2.

-- SQL Server
IF OBJECT_ID(N'account_event_snapshots', N'U') IS NULL
    CREATE TABLE account_event_snapshots (
        id               VARCHAR(36)   NOT NULL PRIMARY KEY,
        aggregate_id     NVARCHAR(510) COLLATE Latin1_General_100_BIN2 NOT NULL,
        aggregate_type   NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
        sequence_no      BIGINT        NOT NULL,
        snapshot_version INT           NOT NULL DEFAULT 1,
        payload          NVARCHAR(MAX) NOT NULL,
        created_at       DATETIME2     NOT NULL DEFAULT SYSUTCDATETIME(),
        CONSTRAINT uq_account_event_snapshots_sequence UNIQUE (aggregate_id, sequence_no)
    );

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_account_event_snapshots_lookup'
               AND object_id = OBJECT_ID(N'account_event_snapshots'))
    CREATE INDEX idx_account_event_snapshots_lookup
        ON account_event_snapshots (aggregate_id, aggregate_type, snapshot_version, sequence_no DESC);
