-- consumer-checkpoints-schema.sql for mysql, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- Hand edit (deviation MY-1): DEFAULT CHARSET = utf8mb4 added to every CREATE TABLE that lacked it.

-- MySQL / MariaDB
CREATE TABLE IF NOT EXISTS CONSUMERS (
    id                       CHAR(36)     CHARACTER SET ascii NOT NULL PRIMARY KEY,
    consumer_type            VARCHAR(32)  CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL,
    consumer_name            VARCHAR(255) CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL,
    state                    VARCHAR(16)  NULL,
    halt_reason              VARCHAR(32)  NULL,
    epoch                    BIGINT       NULL,
    declaration_fingerprint  VARCHAR(255) NULL,
    state_since              DATETIME(6)  NOT NULL,
    UNIQUE KEY uq_consumers (consumer_type, consumer_name)
) DEFAULT CHARSET = utf8mb4;

-- MySQL / MariaDB
CREATE TABLE IF NOT EXISTS CONSUMER_CHECKPOINTS (
    consumer_id          CHAR(36)     CHARACTER SET ascii NOT NULL,
    source_name          VARCHAR(255) CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL,
    partition_no         SMALLINT     NOT NULL,
    position             BIGINT       NULL,
    incomplete_through   BIGINT       NULL,
    replay_through       BIGINT       NULL,
    epoch                BIGINT       NULL,
    PRIMARY KEY (consumer_id, source_name, partition_no),
    CONSTRAINT fk_consumer_checkpoints_consumer FOREIGN KEY (consumer_id) REFERENCES CONSUMERS (id)
) DEFAULT CHARSET = utf8mb4;
