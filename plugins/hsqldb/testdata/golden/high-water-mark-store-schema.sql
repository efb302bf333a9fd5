-- high-water-mark-store-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- PostgreSQL / H2 / HSQLDB
CREATE TABLE IF NOT EXISTS HIGH_WATER_MARK_STORE (
    topic_name          VARCHAR(255)             NOT NULL,
    high_water_mark   BIGINT                   NOT NULL,
    pending_end       BIGINT                   NULL,
    pending_horizon   BIGINT                   NULL,
    topic_start         BIGINT                   DEFAULT 0 NOT NULL,
    lease_owner       VARCHAR(255)             NULL,
    lease_expires_at  TIMESTAMP WITH TIME ZONE NULL,
    PRIMARY KEY (topic_name)
);
