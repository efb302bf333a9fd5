-- event-capture-global-position-schema.sql for mysql, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- Hand edit (deviation MY-1): DEFAULT CHARSET = utf8mb4 added to every CREATE TABLE that lacked it.

-- MySQL / MariaDB
CREATE TABLE IF NOT EXISTS EVENT_CAPTURE_GLOBAL_POSITION (
    id  TINYINT NOT NULL PRIMARY KEY,
    val BIGINT  NOT NULL
) DEFAULT CHARSET = utf8mb4;
INSERT INTO EVENT_CAPTURE_GLOBAL_POSITION (id, val) VALUES (1, 0)
    ON DUPLICATE KEY UPDATE id = id;
