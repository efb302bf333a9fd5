-- event-publication-metadata-schema.sql for mysql, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- Hand edit (deviation MY-1): DEFAULT CHARSET = utf8mb4 added to every CREATE TABLE that lacked it.

-- MySQL
CREATE TABLE IF NOT EXISTS EVENT_PUBLICATION_METADATA (
  PUBLICATION_ID  VARCHAR(36)  NOT NULL,
  COMPLETION_DATE DATETIME(6)  NULL,
  METADATA        LONGTEXT     NOT NULL,
  PRIMARY KEY (PUBLICATION_ID),
  INDEX idx_event_pub_meta_completion (COMPLETION_DATE)
) DEFAULT CHARSET = utf8mb4;
