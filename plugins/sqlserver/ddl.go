package sqlserver

import (
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// MaxIdentifierLength is the longest identifier SQL Server accepts.
const MaxIdentifierLength = 128

// ddl returns the DDL templates of every standard script, keyed by script name.
func ddl() map[string][]string {
	m := map[string][]string{}
	for _, part := range []map[string][]string{eventSourcingDDL(), messagingDDL(), consumerDDL(), cqrsSagaDDL()} {
		for name, stmts := range part {
			m[name] = stmts
		}
	}
	return m
}

// ifNoTable guards a CREATE TABLE of ${placeholder}.
func ifNoTable(placeholder string) string {
	return "IF OBJECT_ID(N'${" + placeholder + "}', N'U') IS NULL\n"
}

// guardedIndex creates index name on ${placeholder} (columns) unless an index
// of that name exists on the table. name may contain placeholders.
func guardedIndex(placeholder, name string, unique bool, columns ...string) string {
	t := "${" + placeholder + "}"
	kind := "INDEX"
	if unique {
		kind = "UNIQUE INDEX"
	}
	return "IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = '" + name + "'\n" +
		"               AND object_id = OBJECT_ID(N'" + t + "'))\n" +
		"    CREATE " + kind + " " + name + "\n" +
		"        ON " + t + " (" + strings.Join(columns, ", ") + ")"
}

// counterDDL is the single-row position counter of the spec (id TINYINT,
// val BIGINT) and its seed. The seed locks the key range it probes
// (UPDLOCK, HOLDLOCK), so two concurrent seeds cannot both insert, and it
// never overwrites an existing row.
func counterDDL(placeholder string) []string {
	t := "${" + placeholder + "}"
	return []string{
		ifNoTable(placeholder) + `    CREATE TABLE ` + t + ` (
        id  TINYINT NOT NULL PRIMARY KEY,
        val BIGINT  NOT NULL
    )`,
		`INSERT INTO ` + t + ` (id, val)
    SELECT 1, 0
    WHERE NOT EXISTS (SELECT 1 FROM ` + t + ` WITH (UPDLOCK, HOLDLOCK) WHERE id = 1)`,
	}
}

// eventSourcingDDL: the global-position counter, event tables, snapshots and
// the partition count.
func eventSourcingDDL() map[string][]string {
	return map[string][]string{
		dialect.ScriptEventStoreGlobalPosition: counterDDL("event_store_global_position_table"),
		dialect.ScriptEventStore: {
			ifNoTable("event_store_table") + `    CREATE TABLE ${event_store_table} (
        id              VARCHAR(36)   NOT NULL PRIMARY KEY,
        aggregate_id    NVARCHAR(510) COLLATE Latin1_General_100_BIN2 NOT NULL,
        aggregate_type  NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
        sequence_no     BIGINT        NOT NULL,
        event_type      VARCHAR(255)  NOT NULL,
        event_revision  INT           NOT NULL DEFAULT 0,
        payload         NVARCHAR(MAX) NOT NULL,
        metadata        NVARCHAR(MAX),
        occurred_at     DATETIME2     NOT NULL DEFAULT SYSUTCDATETIME(),
        partition_key   SMALLINT      NOT NULL,
        global_position BIGINT        NOT NULL,
        CONSTRAINT uq_${event_store_table}_sequence UNIQUE (aggregate_id, sequence_no)
    )`,
			guardedIndex("event_store_table", "idx_${event_store_table}_aggregate", false, "aggregate_id", "aggregate_type", "sequence_no"),
			guardedIndex("event_store_table", "idx_${event_store_table}_global", false, "global_position"),
			guardedIndex("event_store_table", "idx_${event_store_table}_partition", false, "partition_key", "global_position"),
		},
		dialect.ScriptSnapshots: {
			ifNoTable("aggregate_snapshots_table") + `    CREATE TABLE ${aggregate_snapshots_table} (
        id               VARCHAR(36)   NOT NULL PRIMARY KEY,
        aggregate_id     NVARCHAR(510) COLLATE Latin1_General_100_BIN2 NOT NULL,
        aggregate_type   NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
        sequence_no      BIGINT        NOT NULL,
        snapshot_version INT           NOT NULL DEFAULT 1,
        payload          NVARCHAR(MAX) NOT NULL,
        created_at       DATETIME2     NOT NULL DEFAULT SYSUTCDATETIME(),
        CONSTRAINT uq_${aggregate_snapshots_table}_sequence UNIQUE (aggregate_id, sequence_no)
    )`,
			guardedIndex("aggregate_snapshots_table", "idx_${aggregate_snapshots_table}_lookup", false,
				"aggregate_id", "aggregate_type", "snapshot_version", "sequence_no DESC"),
		},
		dialect.ScriptPartitionMetadata: {ifNoTable("partition_metadata_table") + `    CREATE TABLE ${partition_metadata_table} (
        id         SMALLINT NOT NULL,
        partitions INT      NOT NULL,
        PRIMARY KEY (id)
    )`},
	}
}

// messagingDDL: the capture topic, the high-water mark, compaction and the
// partition leases.
func messagingDDL() map[string][]string {
	return map[string][]string{
		dialect.ScriptEventCaptureGlobalPos: counterDDL("event_capture_global_position_table"),
		dialect.ScriptEventCaptureRecords: {
			ifNoTable("event_capture_records_table") + `    CREATE TABLE ${event_capture_records_table} (
        id              VARCHAR(36)   NOT NULL PRIMARY KEY,
        global_position BIGINT        NOT NULL,
        partition_key   SMALLINT      NOT NULL,
        event_type      VARCHAR(255)  NOT NULL,
        event_revision  INT           NOT NULL DEFAULT 0,
        payload         NVARCHAR(MAX) NOT NULL,
        metadata        NVARCHAR(MAX),
        occurred_at     DATETIME2     NOT NULL,
        message_key     NVARCHAR(255) COLLATE Latin1_General_100_BIN2,
        CONSTRAINT uq_${event_capture_records_table}_global_position UNIQUE (global_position)
    )`,
			guardedIndex("event_capture_records_table", "idx_${event_capture_records_table}_partition", false, "partition_key", "global_position"),
			guardedIndex("event_capture_records_table", "idx_${event_capture_records_table}_key", false, "message_key", "global_position"),
		},
		dialect.ScriptHighWaterMarkStore: {ifNoTable("high_water_mark_store_table") + `CREATE TABLE ${high_water_mark_store_table} (
    topic_name        VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    high_water_mark   BIGINT       NOT NULL,
    pending_end       BIGINT       NULL,
    pending_horizon   BIGINT       NULL,
    topic_start       BIGINT       NOT NULL DEFAULT 0,
    lease_owner       VARCHAR(255) NULL,
    lease_expires_at  DATETIME2    NULL,
    PRIMARY KEY (topic_name)
)`},
		dialect.ScriptTopicCompaction: {ifNoTable("topic_compaction_table") + `    CREATE TABLE ${topic_compaction_table} (
        topic_name        NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL PRIMARY KEY,
        compacted_through BIGINT NOT NULL
    )`},
		dialect.ScriptPartitionInstances: {ifNoTable("partition_instances_table") + `CREATE TABLE ${partition_instances_table} (
    instance_id     VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    host_name       VARCHAR(255) NULL,
    started_at      DATETIME2    NOT NULL,
    last_heartbeat  DATETIME2    NOT NULL,
    expires_at      DATETIME2    NOT NULL,
    PRIMARY KEY (instance_id)
)`},
		dialect.ScriptPartitionOwnership: {
			ifNoTable("partition_ownership_table") + `CREATE TABLE ${partition_ownership_table} (
    consumer_type     VARCHAR(32)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    consumer_name     VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    partition_no      SMALLINT     NOT NULL,
    instance_id       VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NULL,
    generation        BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (consumer_type, consumer_name, partition_no)
)`,
			guardedIndex("partition_ownership_table", "idx_${partition_ownership_table}_instance_id", false, "instance_id"),
		},
		dialect.ScriptPartitionMembers: {
			ifNoTable("partition_members_table") + `CREATE TABLE ${partition_members_table} (
    consumer_type  VARCHAR(32)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    consumer_name  VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    instance_id    VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    PRIMARY KEY (consumer_type, consumer_name, instance_id)
)`,
			guardedIndex("partition_members_table", "idx_${partition_members_table}_instance_id", false, "instance_id"),
		},
	}
}

// consumerDDL: consumers, their checkpoints, undelivered and skipped
// messages.
func consumerDDL() map[string][]string {
	return map[string][]string{
		dialect.ScriptConsumerCheckpoints: {
			ifNoTable("consumers_table") + `CREATE TABLE ${consumers_table} (
    id                       VARCHAR(36)  NOT NULL PRIMARY KEY,
    consumer_type            VARCHAR(32)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    consumer_name            VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    state                    VARCHAR(16)  NULL,
    halt_reason              VARCHAR(32)  NULL,
    epoch                    BIGINT       NULL,
    declaration_fingerprint  VARCHAR(255) NULL,
    state_since              DATETIME2    NOT NULL,
    CONSTRAINT uq_${consumers_table} UNIQUE (consumer_type, consumer_name)
)`,
			ifNoTable("consumer_checkpoints_table") + `CREATE TABLE ${consumer_checkpoints_table} (
    consumer_id          VARCHAR(36)  NOT NULL,
    source_name          VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    partition_no         SMALLINT     NOT NULL,
    position             BIGINT       NULL,
    incomplete_through   BIGINT       NULL,
    replay_through       BIGINT       NULL,
    epoch                BIGINT       NULL,
    PRIMARY KEY (consumer_id, source_name, partition_no),
    CONSTRAINT fk_${consumer_checkpoints_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)
)`,
		},
		dialect.ScriptConsumerUndelivered: {ifNoTable("consumer_undelivered_messages_table") + `CREATE TABLE ${consumer_undelivered_messages_table} (
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
    CONSTRAINT uq_${consumer_undelivered_messages_table}
        UNIQUE (consumer_id, source_name, message_position, partition_no, key_hash),
    CONSTRAINT fk_${consumer_undelivered_messages_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)
)`},
		dialect.ScriptConsumerSkipped: {
			ifNoTable("consumer_skipped_messages_table") + `CREATE TABLE ${consumer_skipped_messages_table} (
    id               VARCHAR(36)   NOT NULL PRIMARY KEY,
    consumer_id      VARCHAR(36)   NOT NULL,
    source_name      VARCHAR(255)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    partition_no     SMALLINT      NOT NULL,
    message_position BIGINT        NOT NULL,
    resolved_key     NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
    every_key        BIT           NOT NULL,
    CONSTRAINT fk_${consumer_skipped_messages_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)
)`,
			guardedIndex("consumer_skipped_messages_table", "idx_${consumer_skipped_messages_table}_position", false,
				"consumer_id", "source_name", "message_position"),
		},
	}
}
