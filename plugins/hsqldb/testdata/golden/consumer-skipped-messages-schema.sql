-- consumer-skipped-messages-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- PostgreSQL / H2 / HSQLDB
CREATE TABLE IF NOT EXISTS CONSUMER_SKIPPED_MESSAGES (
    id               CHAR(36)     NOT NULL PRIMARY KEY,
    consumer_id      CHAR(36)     NOT NULL,
    source_name      VARCHAR(255) NOT NULL,
    partition_no     SMALLINT     NOT NULL,
    message_position BIGINT       NOT NULL,
    resolved_key     VARCHAR(255) NOT NULL,
    every_key        BOOLEAN      NOT NULL,
    CONSTRAINT fk_consumer_skipped_messages_consumer FOREIGN KEY (consumer_id) REFERENCES CONSUMERS (id)
);

CREATE INDEX IF NOT EXISTS idx_consumer_skipped_messages_position
    ON CONSUMER_SKIPPED_MESSAGES (consumer_id, source_name, message_position);
