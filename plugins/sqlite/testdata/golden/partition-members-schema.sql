-- partition-members-schema.sql for sqlite: Tidemark's own mapping of the spec's H2/PostgreSQL DDL (SQLite is not in the spec).
-- Written by hand; see docs/spec-deviations.md, section SQLite.

-- SQLite
CREATE TABLE IF NOT EXISTS PARTITION_MEMBERS (
    consumer_type  VARCHAR(32)  NOT NULL,
    consumer_name  VARCHAR(255) NOT NULL,
    instance_id    VARCHAR(255) NOT NULL,
    PRIMARY KEY (consumer_type, consumer_name, instance_id)
);
CREATE INDEX IF NOT EXISTS idx_partition_members_instance_id ON PARTITION_MEMBERS (instance_id);
