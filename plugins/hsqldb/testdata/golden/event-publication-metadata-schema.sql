-- event-publication-metadata-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- HSQLDB
CREATE TABLE IF NOT EXISTS EVENT_PUBLICATION_METADATA (
  PUBLICATION_ID  VARCHAR(36)              NOT NULL,
  COMPLETION_DATE TIMESTAMP WITH TIME ZONE,
  METADATA        LONGVARCHAR              NOT NULL,
  PRIMARY KEY (PUBLICATION_ID)
);

CREATE INDEX IF NOT EXISTS idx_event_pub_meta_completion
  ON EVENT_PUBLICATION_METADATA (COMPLETION_DATE);
