-- snapshot-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- Deviation 5: key columns VARCHAR(510) instead of VARCHAR(255) (UTF-16 code units).
-- HSQLDB
CREATE TABLE IF NOT EXISTS account_event_snapshots (
    id               VARCHAR(36)  PRIMARY KEY,
    aggregate_id     VARCHAR(510) NOT NULL,
    aggregate_type   VARCHAR(510) NOT NULL,
    sequence_no      BIGINT       NOT NULL,
    snapshot_version INT          DEFAULT 1 NOT NULL,
    payload          CLOB         NOT NULL,
    created_at       TIMESTAMP    DEFAULT CURRENT_TIMESTAMP NOT NULL,
    UNIQUE (aggregate_id, sequence_no)
);

CREATE INDEX IF NOT EXISTS idx_account_event_snapshots_lookup
    ON account_event_snapshots (aggregate_id, aggregate_type, snapshot_version, sequence_no DESC);
