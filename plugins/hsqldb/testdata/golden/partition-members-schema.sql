-- partition-members-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- PostgreSQL / H2 / HSQLDB
CREATE TABLE IF NOT EXISTS PARTITION_MEMBERS (
    consumer_type  VARCHAR(32)  NOT NULL,
    consumer_name  VARCHAR(255) NOT NULL,
    instance_id    VARCHAR(255) NOT NULL,
    PRIMARY KEY (consumer_type, consumer_name, instance_id)
);
CREATE INDEX IF NOT EXISTS idx_partition_members_instance_id ON PARTITION_MEMBERS (instance_id);
