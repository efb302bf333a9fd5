package sqlite

import "github.com/tidemarkdb/tidemark/core/dialect"

// messagingDDL holds the messaging scripts: capture topic, high-water mark, compaction, consumers, partition leases, read-model topics.
var messagingDDL = map[string][]string{
	dialect.ScriptEventCaptureGlobalPos: {
		`CREATE TABLE IF NOT EXISTS ${event_capture_global_position_table} (
    id  TINYINT NOT NULL PRIMARY KEY,
    val BIGINT  NOT NULL
)`,
		`INSERT INTO ${event_capture_global_position_table} (id, val) VALUES (1, 0)
    ON CONFLICT (id) DO NOTHING`,
	},
	dialect.ScriptEventCaptureRecords: {
		`CREATE TABLE IF NOT EXISTS ${event_capture_records_table} (
    id              CHAR(36)     NOT NULL PRIMARY KEY,
    global_position BIGINT       NOT NULL,
    partition_key   SMALLINT     NOT NULL,
    event_type      VARCHAR(255) NOT NULL,
    event_revision  INT          NOT NULL DEFAULT 0,
    payload         TEXT         NOT NULL,
    metadata        TEXT,
    occurred_at     TIMESTAMP    NOT NULL,
    message_key     VARCHAR(255),
    UNIQUE (global_position)
)`,
		`CREATE INDEX IF NOT EXISTS idx_${event_capture_records_table}_partition
    ON ${event_capture_records_table} (partition_key, global_position)`,
		`CREATE INDEX IF NOT EXISTS idx_${event_capture_records_table}_key
    ON ${event_capture_records_table} (message_key, global_position)`,
	},
	dialect.ScriptHighWaterMarkStore: {
		`CREATE TABLE IF NOT EXISTS ${high_water_mark_store_table} (
    topic_name          VARCHAR(255)             NOT NULL,
    high_water_mark   BIGINT                   NOT NULL,
    pending_end       BIGINT                   NULL,
    pending_horizon   BIGINT                   NULL,
    topic_start         BIGINT                   DEFAULT 0 NOT NULL,
    lease_owner       VARCHAR(255)             NULL,
    lease_expires_at  TIMESTAMP NULL,
    PRIMARY KEY (topic_name)
)`,
	},
	dialect.ScriptTopicCompaction: {
		`CREATE TABLE IF NOT EXISTS ${topic_compaction_table} (
    topic_name        VARCHAR(255) NOT NULL PRIMARY KEY,
    compacted_through BIGINT       NOT NULL
)`,
	},
	dialect.ScriptConsumerCheckpoints: {
		`CREATE TABLE IF NOT EXISTS ${consumers_table} (
    id                       CHAR(36)     NOT NULL PRIMARY KEY,
    consumer_type            VARCHAR(32)  NOT NULL,
    consumer_name            VARCHAR(255) NOT NULL,
    state                    VARCHAR(16)  NULL,
    halt_reason              VARCHAR(32)  NULL,
    epoch                    BIGINT       NULL,
    declaration_fingerprint  VARCHAR(255) NULL,
    state_since              TIMESTAMP    NOT NULL,
    CONSTRAINT uq_${consumers_table} UNIQUE (consumer_type, consumer_name)
)`,
		`CREATE TABLE IF NOT EXISTS ${consumer_checkpoints_table} (
    consumer_id          CHAR(36)     NOT NULL,
    source_name          VARCHAR(255) NOT NULL,
    partition_no         SMALLINT     NOT NULL,
    position             BIGINT       NULL,
    incomplete_through   BIGINT       NULL,
    replay_through       BIGINT       NULL,
    epoch                BIGINT       NULL,
    PRIMARY KEY (consumer_id, source_name, partition_no),
    CONSTRAINT fk_${consumer_checkpoints_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)
)`,
	},
	dialect.ScriptConsumerUndelivered: {
		`CREATE TABLE IF NOT EXISTS ${consumer_undelivered_messages_table} (
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
)`,
	},
	dialect.ScriptConsumerSkipped: {
		`CREATE TABLE IF NOT EXISTS ${consumer_skipped_messages_table} (
    id               CHAR(36)     NOT NULL PRIMARY KEY,
    consumer_id      CHAR(36)     NOT NULL,
    source_name      VARCHAR(255) NOT NULL,
    partition_no     SMALLINT     NOT NULL,
    message_position BIGINT       NOT NULL,
    resolved_key     VARCHAR(255) NOT NULL,
    every_key        BOOLEAN      NOT NULL,
    CONSTRAINT fk_${consumer_skipped_messages_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)
)`,
		`CREATE INDEX IF NOT EXISTS idx_${consumer_skipped_messages_table}_position
    ON ${consumer_skipped_messages_table} (consumer_id, source_name, message_position)`,
	},
	dialect.ScriptPartitionInstances: {
		`CREATE TABLE IF NOT EXISTS ${partition_instances_table} (
    instance_id     VARCHAR(255)             NOT NULL,
    host_name       VARCHAR(255)             NULL,
    started_at      TIMESTAMP NOT NULL,
    last_heartbeat  TIMESTAMP NOT NULL,
    expires_at      TIMESTAMP NOT NULL,
    PRIMARY KEY (instance_id)
)`,
	},
	dialect.ScriptPartitionOwnership: {
		`CREATE TABLE IF NOT EXISTS ${partition_ownership_table} (
    consumer_type     VARCHAR(32)              NOT NULL,
    consumer_name     VARCHAR(255)             NOT NULL,
    partition_no      SMALLINT                 NOT NULL,
    instance_id       VARCHAR(255)             NULL,
    generation        BIGINT                   NOT NULL DEFAULT 0,
    PRIMARY KEY (consumer_type, consumer_name, partition_no)
)`,
		`CREATE INDEX IF NOT EXISTS idx_${partition_ownership_table}_instance_id ON ${partition_ownership_table} (instance_id)`,
	},
	dialect.ScriptPartitionMembers: {
		`CREATE TABLE IF NOT EXISTS ${partition_members_table} (
    consumer_type  VARCHAR(32)  NOT NULL,
    consumer_name  VARCHAR(255) NOT NULL,
    instance_id    VARCHAR(255) NOT NULL,
    PRIMARY KEY (consumer_type, consumer_name, instance_id)
)`,
		`CREATE INDEX IF NOT EXISTS idx_${partition_members_table}_instance_id ON ${partition_members_table} (instance_id)`,
	},
	dialect.ScriptReadModelTopic: {
		`CREATE TABLE IF NOT EXISTS ${read_model_capture_positions_table} (
    topic       VARCHAR(255) NOT NULL PRIMARY KEY,
    val         BIGINT       NOT NULL
)`,
		`CREATE TABLE IF NOT EXISTS ${read_model_capture_records_table} (
    id                  CHAR(36)     NOT NULL PRIMARY KEY,
    topic               VARCHAR(255) NOT NULL,
    topic_position      BIGINT       NOT NULL,
    partition_key       SMALLINT     NOT NULL,
    read_model_key      VARCHAR(255) NOT NULL,
    read_model_type     VARCHAR(255) NOT NULL,
    read_model_revision INT          NOT NULL DEFAULT 0,
    payload             TEXT         NOT NULL,
    metadata            TEXT,
    cascade_depth       INT          NOT NULL,
    deleted             BOOLEAN      NOT NULL,
    occurred_at         TIMESTAMP    NOT NULL,
    CONSTRAINT uq_${read_model_capture_records_table}_position UNIQUE (topic, topic_position)
)`,
		`CREATE INDEX IF NOT EXISTS idx_${read_model_capture_records_table}_partition
    ON ${read_model_capture_records_table} (topic, partition_key, topic_position)`,
		`CREATE INDEX IF NOT EXISTS idx_${read_model_capture_records_table}_key
    ON ${read_model_capture_records_table} (topic, read_model_key, topic_position)`,
	},
}
