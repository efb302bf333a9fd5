-- partition-instances-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF OBJECT_ID(N'PARTITION_INSTANCES', N'U') IS NULL
CREATE TABLE PARTITION_INSTANCES (
    instance_id     VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    host_name       VARCHAR(255) NULL,
    started_at      DATETIME2    NOT NULL,
    last_heartbeat  DATETIME2    NOT NULL,
    expires_at      DATETIME2    NOT NULL,
    PRIMARY KEY (instance_id)
);
