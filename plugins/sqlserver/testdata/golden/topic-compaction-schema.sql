-- topic-compaction-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF OBJECT_ID(N'TOPIC_COMPACTION', N'U') IS NULL
    CREATE TABLE TOPIC_COMPACTION (
        topic_name        NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL PRIMARY KEY,
        compacted_through BIGINT NOT NULL
    )
