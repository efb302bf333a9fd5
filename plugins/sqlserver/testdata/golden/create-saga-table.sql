-- create-saga-table.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF NOT EXISTS (SELECT * FROM sys.tables WHERE name = 'SAGA_INSTANCES')
CREATE TABLE SAGA_INSTANCES (
    id          VARCHAR(36)   NOT NULL PRIMARY KEY,
    saga_type   VARCHAR(255)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    saga_id     VARCHAR(255)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    state_json  NVARCHAR(MAX) NOT NULL,
    version     BIGINT        NOT NULL,
    completed_at DATETIME2,
    UNIQUE (saga_type, saga_id)
)
