-- create-saga-table.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- HSQLDB
CREATE TABLE IF NOT EXISTS SAGA_INSTANCES (
    id          VARCHAR(36)  NOT NULL PRIMARY KEY,
    saga_type   VARCHAR(255) NOT NULL,
    saga_id     VARCHAR(255) NOT NULL,
    state_json  LONGVARCHAR  NOT NULL,
    version     BIGINT       NOT NULL,
    completed_at TIMESTAMP,
    UNIQUE (saga_type, saga_id)
)
