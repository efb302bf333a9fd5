-- query-table-schema.sql for sqlite: Tidemark's own mapping of the spec's H2/PostgreSQL DDL (SQLite is not in the spec).
-- Written by hand; see docs/spec-deviations.md, section SQLite.

-- SQLite
CREATE TABLE IF NOT EXISTS account_summary (
    read_model_id   VARCHAR(255) NOT NULL,
    message_id      CHAR(36)     NOT NULL,
    iban            VARCHAR(255),
    balance         DECIMAL(38,10),
    PRIMARY KEY (read_model_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_account_summary_iban ON account_summary (iban);
CREATE INDEX IF NOT EXISTS idx_account_summary_balance ON account_summary (balance);
