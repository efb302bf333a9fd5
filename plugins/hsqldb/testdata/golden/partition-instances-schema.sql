-- partition-instances-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- PostgreSQL / H2 / HSQLDB
CREATE TABLE IF NOT EXISTS PARTITION_INSTANCES (
    instance_id     VARCHAR(255)             NOT NULL,
    host_name       VARCHAR(255)             NULL,
    started_at      TIMESTAMP WITH TIME ZONE NOT NULL,
    last_heartbeat  TIMESTAMP WITH TIME ZONE NOT NULL,
    expires_at      TIMESTAMP WITH TIME ZONE NOT NULL,
    PRIMARY KEY (instance_id)
);
