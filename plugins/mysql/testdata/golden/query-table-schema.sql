-- query-table-schema.sql for mysql, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- MySQL / MariaDB
CREATE TABLE IF NOT EXISTS account_summary (
    read_model_id   VARCHAR(255) CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL,
    message_id      CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    iban            VARCHAR(255),
    balance         DECIMAL(38,10),
    PRIMARY KEY (read_model_id)
) DEFAULT CHARSET = utf8mb4;
CREATE UNIQUE INDEX idx_account_summary_iban ON account_summary (iban);
CREATE INDEX idx_account_summary_balance ON account_summary (balance);
