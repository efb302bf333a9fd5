package mysql

import "github.com/tidemarkdb/tidemark/core/dialect"

// MaxIdentifierLength is the longest identifier MySQL and MariaDB accept.
const MaxIdentifierLength = 64

// keyText follows the type of every VARCHAR key column (primary, unique and
// lookup keys: aggregate ids and types, topics, consumer names, message and
// read-model keys, saga ids, lock names): it makes the column compare byte
// for byte with NO PAD, so "acc-1 " and "acc-1", "acc" and "ACC", NFC "é" and
// NFD "e\u0301" are distinct keys. utf8mb4_bin would not do: it is PAD SPACE
// on both engines (a trailing space is ignored, and a primary key refuses
// "acc-1 " after "acc-1"). The two engines name their NO PAD binary
// collation differently, and neither knows the other's name, so each reads
// its own executable comment and skips the other's:
//
//   - MariaDB 10.2.2+ runs /*M!100202 …*/ (utf8mb4_nopad_bin) and ignores
//     /*!80017 …*/: it skips /*!NNNNN*/ comments whose version is 50700 to
//     99999, MySQL 5.7 and 8's own (checked on MariaDB 10.11);
//   - MySQL 8.0.17+ runs /*!80017 …*/ (utf8mb4_0900_bin, NO PAD) and treats
//     /*M!…*/ as a plain comment. MySQL 8.0.0–8.0.16 lack utf8mb4_0900_bin,
//     hence the "MySQL 8.0.17 or later" of the catalogue.
const keyText = "CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ "

// tableOptions ends every CREATE TABLE: the spec leaves most MySQL tables on
// the server's default character set, which may be latin1.
const tableOptions = ") DEFAULT CHARSET = utf8mb4"

// ddl returns the DDL templates of every standard script, keyed by script name.
// Every statement is idempotent: CREATE TABLE IF NOT EXISTS with its indexes
// inline, and counter seeds that never overwrite an existing row.
func ddl() map[string][]string {
	m := map[string][]string{}
	for _, part := range []map[string][]string{eventSourcingDDL(), messagingDDL(), consumerDDL(), cqrsSagaDDL()} {
		for name, stmts := range part {
			m[name] = stmts
		}
	}
	return m
}

// counterDDL is the single-row position counter of the spec (id TINYINT,
// val BIGINT) and its seed, which never overwrites an existing row.
func counterDDL(placeholder string) []string {
	t := "${" + placeholder + "}"
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + t + ` (
    id  TINYINT NOT NULL PRIMARY KEY,
    val BIGINT  NOT NULL
` + tableOptions,
		`INSERT INTO ` + t + ` (id, val) VALUES (1, 0)
    ON DUPLICATE KEY UPDATE id = id`,
	}
}

// eventSourcingDDL: the global-position counter, event tables, snapshots and
// the partition count.
func eventSourcingDDL() map[string][]string {
	return map[string][]string{
		dialect.ScriptEventStoreGlobalPosition: counterDDL("event_store_global_position_table"),
		dialect.ScriptEventStore: {`CREATE TABLE IF NOT EXISTS ${event_store_table} (
    id              CHAR(36)     NOT NULL PRIMARY KEY,
    aggregate_id    VARCHAR(255) ` + keyText + `NOT NULL,
    aggregate_type  VARCHAR(255) ` + keyText + `NOT NULL,
    sequence_no     BIGINT       NOT NULL,
    event_type      VARCHAR(255) NOT NULL,
    event_revision  INT          NOT NULL DEFAULT 0,
    payload         LONGTEXT     NOT NULL,
    metadata        LONGTEXT,
    occurred_at     DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    partition_key   SMALLINT     NOT NULL,
    global_position BIGINT       NOT NULL,
    UNIQUE KEY uq_${event_store_table}_aggregate_sequence (aggregate_id, sequence_no),
    UNIQUE KEY uq_${event_store_table}_global (global_position),
    INDEX idx_${event_store_table}_aggregate (aggregate_id, aggregate_type, sequence_no),
    INDEX idx_${event_store_table}_partition (partition_key, global_position)
` + tableOptions},
		dialect.ScriptSnapshots: {`CREATE TABLE IF NOT EXISTS ${aggregate_snapshots_table} (
    id               CHAR(36)     NOT NULL PRIMARY KEY,
    aggregate_id     VARCHAR(255) ` + keyText + `NOT NULL,
    aggregate_type   VARCHAR(255) ` + keyText + `NOT NULL,
    sequence_no      BIGINT       NOT NULL,
    snapshot_version INT          NOT NULL DEFAULT 1,
    payload          LONGTEXT     NOT NULL,
    created_at       DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    UNIQUE KEY uq_${aggregate_snapshots_table}_sequence (aggregate_id, sequence_no),
    INDEX idx_${aggregate_snapshots_table}_lookup (aggregate_id, aggregate_type, snapshot_version, sequence_no)
` + tableOptions},
		dialect.ScriptPartitionMetadata: {`CREATE TABLE IF NOT EXISTS ${partition_metadata_table} (
    id         SMALLINT NOT NULL,
    partitions INT      NOT NULL,
    PRIMARY KEY (id)
` + tableOptions},
	}
}

// messagingDDL: the capture topic, the high-water mark, compaction and the
// partition leases.
func messagingDDL() map[string][]string {
	return map[string][]string{
		dialect.ScriptEventCaptureGlobalPos: counterDDL("event_capture_global_position_table"),
		dialect.ScriptEventCaptureRecords: {`CREATE TABLE IF NOT EXISTS ${event_capture_records_table} (
    id              CHAR(36)     NOT NULL PRIMARY KEY,
    global_position BIGINT       NOT NULL,
    partition_key   SMALLINT     NOT NULL,
    event_type      VARCHAR(255) NOT NULL,
    event_revision  INT          NOT NULL DEFAULT 0,
    payload         LONGTEXT     NOT NULL,
    metadata        LONGTEXT,
    occurred_at     DATETIME(6)  NOT NULL,
    message_key     VARCHAR(255) ` + keyText + `NULL,
    UNIQUE KEY uq_${event_capture_records_table}_global_position (global_position),
    INDEX idx_${event_capture_records_table}_partition (partition_key, global_position),
    INDEX idx_${event_capture_records_table}_key (message_key, global_position)
` + tableOptions},
		dialect.ScriptHighWaterMarkStore: {`CREATE TABLE IF NOT EXISTS ${high_water_mark_store_table} (
    topic_name        VARCHAR(255) ` + keyText + `NOT NULL,
    high_water_mark   BIGINT       NOT NULL,
    pending_end       BIGINT       NULL,
    pending_horizon   BIGINT       NULL,
    topic_start       BIGINT       NOT NULL DEFAULT 0,
    lease_owner       VARCHAR(255) NULL,
    lease_expires_at  DATETIME(6)  NULL,
    PRIMARY KEY (topic_name)
` + tableOptions},
		dialect.ScriptTopicCompaction: {`CREATE TABLE IF NOT EXISTS ${topic_compaction_table} (
    topic_name        VARCHAR(255) ` + keyText + `NOT NULL PRIMARY KEY,
    compacted_through BIGINT       NOT NULL
` + tableOptions},
		dialect.ScriptPartitionInstances: {`CREATE TABLE IF NOT EXISTS ${partition_instances_table} (
    instance_id     VARCHAR(255) ` + keyText + `NOT NULL,
    host_name       VARCHAR(255) NULL,
    started_at      DATETIME(6)  NOT NULL,
    last_heartbeat  DATETIME(6)  NOT NULL,
    expires_at      DATETIME(6)  NOT NULL,
    PRIMARY KEY (instance_id)
` + tableOptions},
		dialect.ScriptPartitionOwnership: {`CREATE TABLE IF NOT EXISTS ${partition_ownership_table} (
    consumer_type     VARCHAR(32)  ` + keyText + `NOT NULL,
    consumer_name     VARCHAR(255) ` + keyText + `NOT NULL,
    partition_no      SMALLINT     NOT NULL,
    instance_id       VARCHAR(255) ` + keyText + `NULL,
    generation        BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (consumer_type, consumer_name, partition_no),
    INDEX idx_${partition_ownership_table}_instance_id (instance_id)
` + tableOptions},
		dialect.ScriptPartitionMembers: {`CREATE TABLE IF NOT EXISTS ${partition_members_table} (
    consumer_type  VARCHAR(32)  ` + keyText + `NOT NULL,
    consumer_name  VARCHAR(255) ` + keyText + `NOT NULL,
    instance_id    VARCHAR(255) ` + keyText + `NOT NULL,
    PRIMARY KEY (consumer_type, consumer_name, instance_id),
    INDEX idx_${partition_members_table}_instance_id (instance_id)
` + tableOptions},
	}
}

// consumerDDL: consumers, their checkpoints, undelivered and skipped
// messages. The consumer ids are ASCII on both sides of every foreign key.
func consumerDDL() map[string][]string {
	return map[string][]string{
		dialect.ScriptConsumerCheckpoints: {`CREATE TABLE IF NOT EXISTS ${consumers_table} (
    id                       CHAR(36)     CHARACTER SET ascii NOT NULL PRIMARY KEY,
    consumer_type            VARCHAR(32)  ` + keyText + `NOT NULL,
    consumer_name            VARCHAR(255) ` + keyText + `NOT NULL,
    state                    VARCHAR(16)  NULL,
    halt_reason              VARCHAR(32)  NULL,
    epoch                    BIGINT       NULL,
    declaration_fingerprint  VARCHAR(255) NULL,
    state_since              DATETIME(6)  NOT NULL,
    UNIQUE KEY uq_${consumers_table} (consumer_type, consumer_name)
` + tableOptions, `CREATE TABLE IF NOT EXISTS ${consumer_checkpoints_table} (
    consumer_id          CHAR(36)     CHARACTER SET ascii NOT NULL,
    source_name          VARCHAR(255) ` + keyText + `NOT NULL,
    partition_no         SMALLINT     NOT NULL,
    position             BIGINT       NULL,
    incomplete_through   BIGINT       NULL,
    replay_through       BIGINT       NULL,
    epoch                BIGINT       NULL,
    PRIMARY KEY (consumer_id, source_name, partition_no),
    CONSTRAINT fk_${consumer_checkpoints_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)
` + tableOptions},
		dialect.ScriptConsumerUndelivered: {`CREATE TABLE IF NOT EXISTS ${consumer_undelivered_messages_table} (
    id               CHAR(36)      CHARACTER SET ascii NOT NULL PRIMARY KEY,
    consumer_id      CHAR(36)      CHARACTER SET ascii NOT NULL,
    source_name      VARCHAR(255)  ` + keyText + `NOT NULL,
    resolved_key     VARCHAR(255)  ` + keyText + `NOT NULL,
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
    UNIQUE KEY uq_${consumer_undelivered_messages_table}
        (consumer_id, source_name, message_position, partition_no, key_hash),
    CONSTRAINT fk_${consumer_undelivered_messages_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)
` + tableOptions},
		dialect.ScriptConsumerSkipped: {`CREATE TABLE IF NOT EXISTS ${consumer_skipped_messages_table} (
    id               CHAR(36)     CHARACTER SET ascii NOT NULL PRIMARY KEY,
    consumer_id      CHAR(36)     CHARACTER SET ascii NOT NULL,
    source_name      VARCHAR(255) ` + keyText + `NOT NULL,
    partition_no     SMALLINT     NOT NULL,
    message_position BIGINT       NOT NULL,
    resolved_key     VARCHAR(255) ` + keyText + `NOT NULL,
    every_key        BOOLEAN      NOT NULL,
    INDEX idx_${consumer_skipped_messages_table}_position (consumer_id, source_name, message_position),
    CONSTRAINT fk_${consumer_skipped_messages_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)
` + tableOptions},
	}
}
