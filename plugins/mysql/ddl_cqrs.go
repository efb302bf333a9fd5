package mysql

import "github.com/tidemarkdb/tidemark/core/dialect"

// cqrsSagaDDL: read-model topics and epochs, query tables, sagas and the
// domain-event publication metadata.
func cqrsSagaDDL() map[string][]string {
	return map[string][]string{
		dialect.ScriptReadModelTopic: {`CREATE TABLE IF NOT EXISTS ${read_model_capture_positions_table} (
    topic       VARCHAR(255) ` + keyText + `NOT NULL PRIMARY KEY,
    val         BIGINT       NOT NULL
` + tableOptions, `CREATE TABLE IF NOT EXISTS ${read_model_capture_records_table} (
    id                  CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
    topic               VARCHAR(255) ` + keyText + `NOT NULL,
    topic_position      BIGINT       NOT NULL,
    partition_key       SMALLINT     NOT NULL,
    read_model_key      VARCHAR(255) ` + keyText + `NOT NULL,
    read_model_type     VARCHAR(255) NOT NULL,
    read_model_revision INT          NOT NULL DEFAULT 0,
    payload             LONGTEXT     NOT NULL,
    metadata            LONGTEXT,
    cascade_depth       INT          NOT NULL,
    deleted             BOOLEAN      NOT NULL,
    occurred_at         DATETIME(6)  NOT NULL,
    UNIQUE KEY uq_${read_model_capture_records_table}_position (topic, topic_position),
    INDEX idx_${read_model_capture_records_table}_key (topic, read_model_key, topic_position),
    INDEX idx_${read_model_capture_records_table}_partition (topic, partition_key, topic_position)
` + tableOptions},
		dialect.ScriptReadModelEpochs: {`CREATE TABLE IF NOT EXISTS ${read_model_epochs_table} (
    projection     VARCHAR(255) ` + keyText + `NOT NULL,
    read_model_key VARCHAR(255) ` + keyText + `NOT NULL,
    epoch          BIGINT       NOT NULL,
    PRIMARY KEY (projection, read_model_key)
` + tableOptions},
		// ${query_columns} is one "column type," line per query field (see
		// queryColumns), so a projection without query fields still yields
		// valid DDL. The per-column indexes are QueryColumnTypes.Index and
		// UniqueIndex, run by the core when IndexExists finds no such index.
		dialect.ScriptQueryTable: {`CREATE TABLE IF NOT EXISTS ${query_table} (
    read_model_id   VARCHAR(255) ` + keyText + `NOT NULL,
    message_id      CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    ${query_columns}
    PRIMARY KEY (read_model_id)
` + tableOptions},
		dialect.ScriptSagaInstances: {`CREATE TABLE IF NOT EXISTS ${saga_instances_table} (
    id          CHAR(36)     NOT NULL PRIMARY KEY,
    saga_type   VARCHAR(255) ` + keyText + `NOT NULL,
    saga_id     VARCHAR(255) ` + keyText + `NOT NULL,
    state_json  LONGTEXT     NOT NULL,
    version     BIGINT       NOT NULL,
    completed_at DATETIME(6),
    UNIQUE (saga_type, saga_id)
` + tableOptions},
		// The unique key (saga_type, saga_id, name) takes 3 × 255 × 4 = 3060
		// bytes in utf8mb4, within InnoDB's 3072-byte limit.
		dialect.ScriptSagaDeadlines: {`CREATE TABLE IF NOT EXISTS ${saga_deadlines_table} (
    id            CHAR(36)     NOT NULL PRIMARY KEY,
    saga_type     VARCHAR(255) ` + keyText + `NOT NULL,
    saga_id       VARCHAR(255) ` + keyText + `NOT NULL,
    name          VARCHAR(255) ` + keyText + `NOT NULL,
    due_at        DATETIME(6)  NOT NULL,
    payload_json  LONGTEXT,
    metadata_json LONGTEXT,
    UNIQUE (saga_type, saga_id, name),
    INDEX idx_${saga_deadlines_table}_due_at (due_at)
` + tableOptions},
		dialect.ScriptSagaDeadlineLocks: {`CREATE TABLE IF NOT EXISTS ${saga_deadline_locks_table} (
    lock_name  VARCHAR(255) ` + keyText + `NOT NULL,
    owner      VARCHAR(255) NOT NULL,
    expires_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (lock_name)
` + tableOptions},
		// Spring Modulith's tables take no prefix; the index name is fixed.
		dialect.ScriptEventPublicationMetadata: {`CREATE TABLE IF NOT EXISTS ${event_publication_metadata_table} (
  PUBLICATION_ID  VARCHAR(36)  NOT NULL,
  COMPLETION_DATE DATETIME(6)  NULL,
  METADATA        LONGTEXT     NOT NULL,
  PRIMARY KEY (PUBLICATION_ID),
  INDEX idx_event_pub_meta_completion (COMPLETION_DATE)
` + tableOptions},
	}
}
