-- high-water-mark-store-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF OBJECT_ID(N'HIGH_WATER_MARK_STORE', N'U') IS NULL
CREATE TABLE HIGH_WATER_MARK_STORE (
    topic_name          VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    high_water_mark   BIGINT       NOT NULL,
    pending_end       BIGINT       NULL,
    pending_horizon   BIGINT       NULL,
    topic_start         BIGINT       NOT NULL DEFAULT 0,
    lease_owner       VARCHAR(255) NULL,
    lease_expires_at  DATETIME2    NULL,
    PRIMARY KEY (topic_name)
);
