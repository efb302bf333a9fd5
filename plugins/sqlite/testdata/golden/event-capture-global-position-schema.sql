-- event-capture-global-position-schema.sql for sqlite: Tidemark's own mapping of the spec's H2/PostgreSQL DDL (SQLite is not in the spec).
-- Written by hand; see docs/spec-deviations.md, section SQLite.

-- SQLite
CREATE TABLE IF NOT EXISTS EVENT_CAPTURE_GLOBAL_POSITION (
    id  TINYINT NOT NULL PRIMARY KEY,
    val BIGINT  NOT NULL
);
INSERT INTO EVENT_CAPTURE_GLOBAL_POSITION (id, val) VALUES (1, 0)
    ON CONFLICT (id) DO NOTHING;
