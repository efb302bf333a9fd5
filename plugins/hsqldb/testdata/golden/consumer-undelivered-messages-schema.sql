-- consumer-undelivered-messages-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- PostgreSQL (TEXT) / H2, HSQLDB (CLOB)
CREATE TABLE IF NOT EXISTS CONSUMER_UNDELIVERED_MESSAGES (
    id               CHAR(36)      NOT NULL PRIMARY KEY,
    consumer_id      CHAR(36)      NOT NULL,
    source_name      VARCHAR(255)  NOT NULL,
    resolved_key     VARCHAR(255)  NOT NULL,
    key_hash         BIGINT        NOT NULL,
    message_position BIGINT        NOT NULL,
    partition_no     SMALLINT      NOT NULL,
    status           VARCHAR(16)   NOT NULL,
    failure_count    INT           NOT NULL,
    next_retry_at    TIMESTAMP     NULL,
    failure_reason   VARCHAR(1000) NULL,
    recorded_at      TIMESTAMP     NOT NULL,
    unresolved       BOOLEAN       NOT NULL,
    message_copy     CLOB          NULL,
    CONSTRAINT uq_consumer_undelivered_messages
        UNIQUE (consumer_id, source_name, message_position, partition_no, key_hash),
    CONSTRAINT fk_consumer_undelivered_messages_consumer FOREIGN KEY (consumer_id) REFERENCES CONSUMERS (id)
);
