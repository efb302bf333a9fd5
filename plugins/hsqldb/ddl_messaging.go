package hsqldb

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/internal/specddl"
)

// messagingDDL holds the messaging scripts that are not the same on every
// dialect: capture topic, high-water mark, undelivered messages, partition
// leases, read-model topics (the rest are in specddl.CommonScripts).
var messagingDDL = map[string][]string{
	dialect.ScriptEventCaptureGlobalPos: {
		specddl.CounterTable("event_capture_global_position_table"),
		specddl.CounterSeedMerge("event_capture_global_position_table"),
	},
	dialect.ScriptEventCaptureRecords: {
		`CREATE TABLE IF NOT EXISTS ${event_capture_records_table} (
    id              VARCHAR(36)  PRIMARY KEY,
    global_position BIGINT       NOT NULL,
    partition_key   SMALLINT     NOT NULL,
    event_type      VARCHAR(255) NOT NULL,
    event_revision  INT          DEFAULT 0 NOT NULL,
    payload         CLOB         NOT NULL,
    metadata        CLOB,
    occurred_at     TIMESTAMP    NOT NULL,
    message_key     VARCHAR(255),
    UNIQUE (global_position)
)`,
		specddl.EventCaptureRecordsPartitionIndex,
		specddl.EventCaptureRecordsKeyIndex,
	},
	dialect.ScriptHighWaterMarkStore: {specddl.HighWaterMarkStoreTable},
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
    message_copy     CLOB          NULL,
    CONSTRAINT uq_${consumer_undelivered_messages_table}
        UNIQUE (consumer_id, source_name, message_position, partition_no, key_hash),
    CONSTRAINT fk_${consumer_undelivered_messages_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)
)`,
	},
	dialect.ScriptPartitionInstances: {specddl.PartitionInstancesTable},
	dialect.ScriptPartitionOwnership: {
		`CREATE TABLE IF NOT EXISTS ${partition_ownership_table} (
    consumer_type     VARCHAR(32)              NOT NULL,
    consumer_name     VARCHAR(255)             NOT NULL,
    partition_no      SMALLINT                 NOT NULL,
    instance_id       VARCHAR(255)             NULL,
    generation        BIGINT                   DEFAULT 0 NOT NULL,
    PRIMARY KEY (consumer_type, consumer_name, partition_no)
)`,
		specddl.PartitionOwnershipInstanceIndex,
	},
	dialect.ScriptReadModelTopic: {
		specddl.ReadModelCapturePositionsTable,
		`CREATE TABLE IF NOT EXISTS ${read_model_capture_records_table} (
    id                  VARCHAR(36)  PRIMARY KEY,
    topic               VARCHAR(255) NOT NULL,
    topic_position      BIGINT       NOT NULL,
    partition_key       SMALLINT     NOT NULL,
    read_model_key      VARCHAR(255) NOT NULL,
    read_model_type     VARCHAR(255) NOT NULL,
    read_model_revision INT          DEFAULT 0 NOT NULL,
    payload             LONGVARCHAR  NOT NULL,
    metadata            LONGVARCHAR,
    cascade_depth       INT          NOT NULL,
    deleted             BOOLEAN      NOT NULL,
    occurred_at         TIMESTAMP    NOT NULL,
    CONSTRAINT uq_${read_model_capture_records_table}_position UNIQUE (topic, topic_position)
)`,
		specddl.ReadModelCaptureRecordsPartitionIndex,
		specddl.ReadModelCaptureRecordsKeyIndex,
	},
}
