-- topic-compaction-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- PostgreSQL / H2 / HSQLDB
CREATE TABLE IF NOT EXISTS TOPIC_COMPACTION (
    topic_name        VARCHAR(255) NOT NULL PRIMARY KEY,
    compacted_through BIGINT       NOT NULL
)
