-- event-capture-global-position-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- H2 / HSQLDB
CREATE TABLE IF NOT EXISTS EVENT_CAPTURE_GLOBAL_POSITION (
    id  TINYINT NOT NULL PRIMARY KEY,
    val BIGINT  NOT NULL
);
MERGE INTO EVENT_CAPTURE_GLOBAL_POSITION t
    USING (VALUES (1, 0)) AS s (id, val) ON t.id = s.id
    WHEN NOT MATCHED THEN INSERT (id, val) VALUES (s.id, s.val);
