-- partition-members-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF OBJECT_ID(N'PARTITION_MEMBERS', N'U') IS NULL
CREATE TABLE PARTITION_MEMBERS (
    consumer_type  VARCHAR(32)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    consumer_name  VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    instance_id    VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    PRIMARY KEY (consumer_type, consumer_name, instance_id)
);
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_partition_members_instance_id'
               AND object_id = OBJECT_ID(N'PARTITION_MEMBERS'))
    CREATE INDEX idx_partition_members_instance_id ON PARTITION_MEMBERS (instance_id);
