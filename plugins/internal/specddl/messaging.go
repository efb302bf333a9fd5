package specddl

// Messaging statements shared across dialects: capture topic, high-water
// mark, compaction, consumers, partition leases, read-model topics.

// The capture topic's indexes, the same on every dialect.
const (
	EventCaptureRecordsPartitionIndex = `CREATE INDEX IF NOT EXISTS idx_${event_capture_records_table}_partition
    ON ${event_capture_records_table} (partition_key, global_position)`
	EventCaptureRecordsKeyIndex = `CREATE INDEX IF NOT EXISTS idx_${event_capture_records_table}_key
    ON ${event_capture_records_table} (message_key, global_position)`
)

// HighWaterMarkStoreTable is the high-water-mark table of PostgreSQL, H2 and
// HSQLDB (SQLite declares its lease expiry as plain TIMESTAMP).
const HighWaterMarkStoreTable = `CREATE TABLE IF NOT EXISTS ${high_water_mark_store_table} (
    topic_name          VARCHAR(255)             NOT NULL,
    high_water_mark   BIGINT                   NOT NULL,
    pending_end       BIGINT                   NULL,
    pending_horizon   BIGINT                   NULL,
    topic_start         BIGINT                   DEFAULT 0 NOT NULL,
    lease_owner       VARCHAR(255)             NULL,
    lease_expires_at  TIMESTAMP WITH TIME ZONE NULL,
    PRIMARY KEY (topic_name)
)`

// ConsumerUndeliveredMessagesTable is the undelivered-messages table of
// PostgreSQL, H2 and SQLite, whose message copy is TEXT (HSQLDB's is CLOB).
const ConsumerUndeliveredMessagesTable = `CREATE TABLE IF NOT EXISTS ${consumer_undelivered_messages_table} (
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
    message_copy     TEXT          NULL,
    CONSTRAINT uq_${consumer_undelivered_messages_table}
        UNIQUE (consumer_id, source_name, message_position, partition_no, key_hash),
    CONSTRAINT fk_${consumer_undelivered_messages_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)
)`

// PartitionInstancesTable is the partition-instances table of PostgreSQL, H2
// and HSQLDB (SQLite declares its timestamps as plain TIMESTAMP).
const PartitionInstancesTable = `CREATE TABLE IF NOT EXISTS ${partition_instances_table} (
    instance_id     VARCHAR(255)             NOT NULL,
    host_name       VARCHAR(255)             NULL,
    started_at      TIMESTAMP WITH TIME ZONE NOT NULL,
    last_heartbeat  TIMESTAMP WITH TIME ZONE NOT NULL,
    expires_at      TIMESTAMP WITH TIME ZONE NOT NULL,
    PRIMARY KEY (instance_id)
)`

// PartitionOwnershipTable is the partition-ownership table of PostgreSQL, H2
// and SQLite (HSQLDB writes the DEFAULT before NOT NULL).
const PartitionOwnershipTable = `CREATE TABLE IF NOT EXISTS ${partition_ownership_table} (
    consumer_type     VARCHAR(32)              NOT NULL,
    consumer_name     VARCHAR(255)             NOT NULL,
    partition_no      SMALLINT                 NOT NULL,
    instance_id       VARCHAR(255)             NULL,
    generation        BIGINT                   NOT NULL DEFAULT 0,
    PRIMARY KEY (consumer_type, consumer_name, partition_no)
)`

// PartitionOwnershipInstanceIndex is the partition-ownership table's index,
// the same on every dialect.
const PartitionOwnershipInstanceIndex = `CREATE INDEX IF NOT EXISTS idx_${partition_ownership_table}_instance_id ON ${partition_ownership_table} (instance_id)`

// ReadModelCapturePositionsTable is the per-topic counter table of the
// read-model capture positions on H2, HSQLDB and SQLite, whose rows are added
// per topic at runtime.
const ReadModelCapturePositionsTable = `CREATE TABLE IF NOT EXISTS ${read_model_capture_positions_table} (
    topic       VARCHAR(255) NOT NULL PRIMARY KEY,
    val         BIGINT       NOT NULL
)`

// The read-model capture records' indexes, the same on every dialect.
const (
	ReadModelCaptureRecordsPartitionIndex = `CREATE INDEX IF NOT EXISTS idx_${read_model_capture_records_table}_partition
    ON ${read_model_capture_records_table} (topic, partition_key, topic_position)`
	ReadModelCaptureRecordsKeyIndex = `CREATE INDEX IF NOT EXISTS idx_${read_model_capture_records_table}_key
    ON ${read_model_capture_records_table} (topic, read_model_key, topic_position)`
)

// topicCompactionTable is the whole topic-compaction script (see
// CommonScripts).
const topicCompactionTable = `CREATE TABLE IF NOT EXISTS ${topic_compaction_table} (
    topic_name        VARCHAR(255) NOT NULL PRIMARY KEY,
    compacted_through BIGINT       NOT NULL
)`

// consumersTable and consumerCheckpointsTable make the consumer-checkpoints
// script (see CommonScripts).
const (
	consumersTable = `CREATE TABLE IF NOT EXISTS ${consumers_table} (
    id                       CHAR(36)     NOT NULL PRIMARY KEY,
    consumer_type            VARCHAR(32)  NOT NULL,
    consumer_name            VARCHAR(255) NOT NULL,
    state                    VARCHAR(16)  NULL,
    halt_reason              VARCHAR(32)  NULL,
    epoch                    BIGINT       NULL,
    declaration_fingerprint  VARCHAR(255) NULL,
    state_since              TIMESTAMP    NOT NULL,
    CONSTRAINT uq_${consumers_table} UNIQUE (consumer_type, consumer_name)
)`
	consumerCheckpointsTable = `CREATE TABLE IF NOT EXISTS ${consumer_checkpoints_table} (
    consumer_id          CHAR(36)     NOT NULL,
    source_name          VARCHAR(255) NOT NULL,
    partition_no         SMALLINT     NOT NULL,
    position             BIGINT       NULL,
    incomplete_through   BIGINT       NULL,
    replay_through       BIGINT       NULL,
    epoch                BIGINT       NULL,
    PRIMARY KEY (consumer_id, source_name, partition_no),
    CONSTRAINT fk_${consumer_checkpoints_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)
)`
)

// consumerSkippedMessagesTable and its index make the consumer-skipped
// script (see CommonScripts).
const (
	consumerSkippedMessagesTable = `CREATE TABLE IF NOT EXISTS ${consumer_skipped_messages_table} (
    id               CHAR(36)     NOT NULL PRIMARY KEY,
    consumer_id      CHAR(36)     NOT NULL,
    source_name      VARCHAR(255) NOT NULL,
    partition_no     SMALLINT     NOT NULL,
    message_position BIGINT       NOT NULL,
    resolved_key     VARCHAR(255) NOT NULL,
    every_key        BOOLEAN      NOT NULL,
    CONSTRAINT fk_${consumer_skipped_messages_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)
)`
	consumerSkippedMessagesPositionIndex = `CREATE INDEX IF NOT EXISTS idx_${consumer_skipped_messages_table}_position
    ON ${consumer_skipped_messages_table} (consumer_id, source_name, message_position)`
)

// partitionMembersTable and its index make the partition-members script (see
// CommonScripts).
const (
	partitionMembersTable = `CREATE TABLE IF NOT EXISTS ${partition_members_table} (
    consumer_type  VARCHAR(32)  NOT NULL,
    consumer_name  VARCHAR(255) NOT NULL,
    instance_id    VARCHAR(255) NOT NULL,
    PRIMARY KEY (consumer_type, consumer_name, instance_id)
)`
	partitionMembersInstanceIndex = `CREATE INDEX IF NOT EXISTS idx_${partition_members_table}_instance_id ON ${partition_members_table} (instance_id)`
)
