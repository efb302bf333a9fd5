-- event-store-schema.sql for h2, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- Deviation 5: key columns VARCHAR(510) instead of VARCHAR(255) (UTF-16 code units).

-- H2
CREATE TABLE IF NOT EXISTS account_event (
    id              UUID         PRIMARY KEY,
    aggregate_id    VARCHAR(510) NOT NULL,
    aggregate_type  VARCHAR(510) NOT NULL,
    sequence_no     BIGINT       NOT NULL,
    event_type      VARCHAR(510) NOT NULL,
    event_revision  INT          NOT NULL DEFAULT 0,
    payload         CLOB         NOT NULL,
    metadata        CLOB,
    occurred_at     TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
    partition_key   SMALLINT     NOT NULL,
    global_position BIGINT       NOT NULL,
    UNIQUE (aggregate_id, sequence_no)
);

CREATE INDEX IF NOT EXISTS idx_account_event_aggregate
    ON account_event (aggregate_id, aggregate_type, sequence_no);

CREATE INDEX IF NOT EXISTS idx_account_event_global
    ON account_event (global_position);

CREATE INDEX IF NOT EXISTS idx_account_event_partition
    ON account_event (partition_key, global_position);

-- Deviation (docs/spec-deviations.md): H2 reads indexes forwards only; this
-- index makes a stream's last event its first entry (the version reads).
CREATE INDEX IF NOT EXISTS idx_account_event_last
    ON account_event (aggregate_id, sequence_no DESC);
