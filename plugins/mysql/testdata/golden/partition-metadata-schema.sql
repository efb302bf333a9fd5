-- partition-metadata-schema.sql for mysql, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- Hand edit (deviation MY-1): DEFAULT CHARSET = utf8mb4 added to every CREATE TABLE that lacked it.

-- PostgreSQL / H2 / HSQLDB / MySQL / MariaDB
CREATE TABLE IF NOT EXISTS PARTITION_METADATA (
    id         SMALLINT NOT NULL,
    partitions INT      NOT NULL,
    PRIMARY KEY (id)
) DEFAULT CHARSET = utf8mb4
