-- create-deadline-table.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF NOT EXISTS (SELECT * FROM sys.tables WHERE name = 'SAGA_DEADLINES')
CREATE TABLE SAGA_DEADLINES (
    id            VARCHAR(36)   NOT NULL PRIMARY KEY,
    saga_type     VARCHAR(255)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    saga_id       VARCHAR(255)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    name          VARCHAR(255)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    due_at        DATETIME2     NOT NULL,
    payload_json  NVARCHAR(MAX),
    metadata_json NVARCHAR(MAX),
    UNIQUE (saga_type, saga_id, name)
);

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_SAGA_DEADLINES_due_at'
               AND object_id = OBJECT_ID(N'SAGA_DEADLINES'))
    CREATE INDEX idx_SAGA_DEADLINES_due_at
        ON SAGA_DEADLINES (due_at);
