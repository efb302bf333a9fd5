-- consumer-undelivered-messages-schema.sql for mysql, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- Hand edit (deviation MY-1): DEFAULT CHARSET = utf8mb4 added to every CREATE TABLE that lacked it.

-- MySQL / MariaDB
CREATE TABLE IF NOT EXISTS CONSUMER_UNDELIVERED_MESSAGES (
    id               CHAR(36)      CHARACTER SET ascii NOT NULL PRIMARY KEY,
    consumer_id      CHAR(36)      CHARACTER SET ascii NOT NULL,
    source_name      VARCHAR(255)  CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL,
    resolved_key     VARCHAR(255)  CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL,
    key_hash         BIGINT        NOT NULL,
    message_position BIGINT        NOT NULL,
    partition_no     SMALLINT      NOT NULL,
    status           VARCHAR(16)   NOT NULL,
    failure_count    INT           NOT NULL,
    next_retry_at    DATETIME(6)   NULL,
    failure_reason   VARCHAR(1000) NULL,
    recorded_at      DATETIME(6)   NOT NULL,
    unresolved       BOOLEAN       NOT NULL,
    message_copy     LONGTEXT      CHARACTER SET utf8mb4 NULL,
    UNIQUE KEY uq_consumer_undelivered_messages
        (consumer_id, source_name, message_position, partition_no, key_hash),
    CONSTRAINT fk_consumer_undelivered_messages_consumer FOREIGN KEY (consumer_id) REFERENCES CONSUMERS (id)
) DEFAULT CHARSET = utf8mb4;
