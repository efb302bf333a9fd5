-- partition-ownership-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- PostgreSQL / H2 / HSQLDB
CREATE TABLE IF NOT EXISTS PARTITION_OWNERSHIP (
    consumer_type     VARCHAR(32)              NOT NULL,
    consumer_name     VARCHAR(255)             NOT NULL,
    partition_no      SMALLINT                 NOT NULL,
    instance_id       VARCHAR(255)             NULL,
    generation        BIGINT                   DEFAULT 0 NOT NULL,
    PRIMARY KEY (consumer_type, consumer_name, partition_no)
);
CREATE INDEX IF NOT EXISTS idx_partition_ownership_instance_id ON PARTITION_OWNERSHIP (instance_id);
