-- consumer-checkpoints-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- PostgreSQL / H2 / HSQLDB
CREATE TABLE IF NOT EXISTS CONSUMERS (
    id                       CHAR(36)     NOT NULL PRIMARY KEY,
    consumer_type            VARCHAR(32)  NOT NULL,
    consumer_name            VARCHAR(255) NOT NULL,
    state                    VARCHAR(16)  NULL,
    halt_reason              VARCHAR(32)  NULL,
    epoch                    BIGINT       NULL,
    declaration_fingerprint  VARCHAR(255) NULL,
    state_since              TIMESTAMP    NOT NULL,
    CONSTRAINT uq_consumers UNIQUE (consumer_type, consumer_name)
);

-- PostgreSQL / H2 / HSQLDB
CREATE TABLE IF NOT EXISTS CONSUMER_CHECKPOINTS (
    consumer_id          CHAR(36)     NOT NULL,
    source_name          VARCHAR(255) NOT NULL,
    partition_no         SMALLINT     NOT NULL,
    position             BIGINT       NULL,
    incomplete_through   BIGINT       NULL,
    replay_through       BIGINT       NULL,
    epoch                BIGINT       NULL,
    PRIMARY KEY (consumer_id, source_name, partition_no),
    CONSTRAINT fk_consumer_checkpoints_consumer FOREIGN KEY (consumer_id) REFERENCES CONSUMERS (id)
);
