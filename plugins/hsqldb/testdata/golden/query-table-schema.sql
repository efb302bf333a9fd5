-- query-table-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- PostgreSQL / H2 (HSQLDB: message_id VARCHAR(36))
CREATE TABLE IF NOT EXISTS account_summary (
    read_model_id   VARCHAR(255) NOT NULL,
    message_id      VARCHAR(36)  NOT NULL,
    iban            VARCHAR(255),
    balance         DECIMAL(38,10),
    PRIMARY KEY (read_model_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_account_summary_iban ON account_summary (iban);
CREATE INDEX IF NOT EXISTS idx_account_summary_balance ON account_summary (balance);
