package sqlite

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
		counterSeedInsert("event_capture_global_position_table"),
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
		specddl.EventCaptureRecordsPartitionIndex,
		specddl.EventCaptureRecordsKeyIndex,
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
	dialect.ScriptConsumerUndelivered: {specddl.ConsumerUndeliveredMessagesTable},
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
		specddl.PartitionOwnershipTable,
		specddl.PartitionOwnershipInstanceIndex,
	},
	dialect.ScriptReadModelTopic: {
		specddl.ReadModelCapturePositionsTable,
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
		specddl.ReadModelCaptureRecordsPartitionIndex,
		specddl.ReadModelCaptureRecordsKeyIndex,
	},
}
