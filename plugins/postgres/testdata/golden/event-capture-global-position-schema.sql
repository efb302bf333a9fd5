-- event-capture-global-position-schema.sql for postgres, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- PostgreSQL
CREATE SEQUENCE IF NOT EXISTS EVENT_CAPTURE_GLOBAL_POSITION START WITH 1 CACHE 1;
