-- consumer-undelivered-messages-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF OBJECT_ID(N'CONSUMER_UNDELIVERED_MESSAGES', N'U') IS NULL
CREATE TABLE CONSUMER_UNDELIVERED_MESSAGES (
    id               VARCHAR(36)    NOT NULL PRIMARY KEY,
    consumer_id      VARCHAR(36)    NOT NULL,
    source_name      VARCHAR(255)   COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    resolved_key     NVARCHAR(255)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    key_hash         BIGINT         NOT NULL,
    message_position BIGINT         NOT NULL,
    partition_no     SMALLINT       NOT NULL,
    status           VARCHAR(16)    NOT NULL,
    failure_count    INT            NOT NULL,
    next_retry_at    DATETIME2      NULL,
    failure_reason   NVARCHAR(1000) NULL,
    recorded_at      DATETIME2      NOT NULL,
    unresolved       BIT            NOT NULL,
    message_copy     NVARCHAR(MAX)  NULL,
    CONSTRAINT uq_consumer_undelivered_messages
        UNIQUE (consumer_id, source_name, message_position, partition_no, key_hash),
    CONSTRAINT fk_consumer_undelivered_messages_consumer FOREIGN KEY (consumer_id) REFERENCES CONSUMERS (id)
);
