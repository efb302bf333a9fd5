-- partition-ownership-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF OBJECT_ID(N'PARTITION_OWNERSHIP', N'U') IS NULL
CREATE TABLE PARTITION_OWNERSHIP (
    consumer_type     VARCHAR(32)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    consumer_name     VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    partition_no      SMALLINT     NOT NULL,
    instance_id       VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NULL,
    generation        BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (consumer_type, consumer_name, partition_no)
);
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_partition_ownership_instance_id'
               AND object_id = OBJECT_ID(N'PARTITION_OWNERSHIP'))
    CREATE INDEX idx_partition_ownership_instance_id ON PARTITION_OWNERSHIP (instance_id);
