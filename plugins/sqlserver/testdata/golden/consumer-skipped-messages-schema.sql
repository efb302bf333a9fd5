-- consumer-skipped-messages-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF OBJECT_ID(N'CONSUMER_SKIPPED_MESSAGES', N'U') IS NULL
CREATE TABLE CONSUMER_SKIPPED_MESSAGES (
    id               VARCHAR(36)   NOT NULL PRIMARY KEY,
    consumer_id      VARCHAR(36)   NOT NULL,
    source_name      VARCHAR(255)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    partition_no     SMALLINT      NOT NULL,
    message_position BIGINT        NOT NULL,
    resolved_key     NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
    every_key        BIT           NOT NULL,
    CONSTRAINT fk_consumer_skipped_messages_consumer FOREIGN KEY (consumer_id) REFERENCES CONSUMERS (id)
);

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_consumer_skipped_messages_position'
               AND object_id = OBJECT_ID(N'CONSUMER_SKIPPED_MESSAGES'))
    CREATE INDEX idx_consumer_skipped_messages_position
        ON CONSUMER_SKIPPED_MESSAGES (consumer_id, source_name, message_position);
