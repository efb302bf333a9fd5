-- consumer-checkpoints-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF OBJECT_ID(N'CONSUMERS', N'U') IS NULL
CREATE TABLE CONSUMERS (
    id                       VARCHAR(36)  NOT NULL PRIMARY KEY,
    consumer_type            VARCHAR(32)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    consumer_name            VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    state                    VARCHAR(16)  NULL,
    halt_reason              VARCHAR(32)  NULL,
    epoch                    BIGINT       NULL,
    declaration_fingerprint  VARCHAR(255) NULL,
    state_since              DATETIME2    NOT NULL,
    CONSTRAINT uq_consumers UNIQUE (consumer_type, consumer_name)
);

-- SQL Server
IF OBJECT_ID(N'CONSUMER_CHECKPOINTS', N'U') IS NULL
CREATE TABLE CONSUMER_CHECKPOINTS (
    consumer_id          VARCHAR(36)  NOT NULL,
    source_name          VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    partition_no         SMALLINT     NOT NULL,
    position             BIGINT       NULL,
    incomplete_through   BIGINT       NULL,
    replay_through       BIGINT       NULL,
    epoch                BIGINT       NULL,
    PRIMARY KEY (consumer_id, source_name, partition_no),
    CONSTRAINT fk_consumer_checkpoints_consumer FOREIGN KEY (consumer_id) REFERENCES CONSUMERS (id)
);
