-- create-deadline-table.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- HSQLDB
CREATE TABLE IF NOT EXISTS SAGA_DEADLINES (
    id            VARCHAR(36)  NOT NULL PRIMARY KEY,
    saga_type     VARCHAR(255) NOT NULL,
    saga_id       VARCHAR(255) NOT NULL,
    name          VARCHAR(255) NOT NULL,
    due_at        TIMESTAMP    NOT NULL,
    payload_json  LONGVARCHAR,
    metadata_json LONGVARCHAR,
    UNIQUE (saga_type, saga_id, name)
);

CREATE INDEX IF NOT EXISTS idx_SAGA_DEADLINES_due_at
    ON SAGA_DEADLINES (due_at);
