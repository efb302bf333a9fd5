-- create-deadline-lock-table.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF NOT EXISTS (SELECT * FROM sys.tables WHERE name = 'SAGA_DEADLINE_LOCKS')
CREATE TABLE SAGA_DEADLINE_LOCKS (
    lock_name  VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    owner      VARCHAR(255) NOT NULL,
    expires_at DATETIME2    NOT NULL,
    PRIMARY KEY (lock_name)
)
