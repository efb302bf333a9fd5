-- event-capture-global-position-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF OBJECT_ID(N'EVENT_CAPTURE_GLOBAL_POSITION', N'U') IS NULL
    CREATE TABLE EVENT_CAPTURE_GLOBAL_POSITION (
        id  TINYINT NOT NULL PRIMARY KEY,
        val BIGINT  NOT NULL
    );
INSERT INTO EVENT_CAPTURE_GLOBAL_POSITION (id, val)
    SELECT 1, 0
    WHERE NOT EXISTS (SELECT 1 FROM EVENT_CAPTURE_GLOBAL_POSITION WITH (UPDLOCK, HOLDLOCK) WHERE id = 1);
