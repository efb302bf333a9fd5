-- query-table-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- Hand edit (deviation SS-1): the query-table indexes are guarded by sys.indexes, like every other index.

-- SQL Server
IF OBJECT_ID(N'account_summary', N'U') IS NULL
    CREATE TABLE account_summary (
        read_model_id   NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
        message_id      VARCHAR(36)   NOT NULL,
        iban            NVARCHAR(255),
        balance         DECIMAL(38,10),
        PRIMARY KEY (read_model_id)
    );
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_account_summary_iban'
               AND object_id = OBJECT_ID(N'account_summary'))
    CREATE UNIQUE INDEX idx_account_summary_iban
        ON account_summary (iban)
        WHERE iban IS NOT NULL;

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_account_summary_balance'
               AND object_id = OBJECT_ID(N'account_summary'))
    CREATE INDEX idx_account_summary_balance
        ON account_summary (balance);
