package firebird

import (
	"fmt"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Firebird 3 has no CREATE TABLE/INDEX IF NOT EXISTS (Firebird 5 adds it
// for some objects only), so every CREATE runs behind a guard on the system
// tables, inside an EXECUTE BLOCK: the statement is then idempotent as the
// contract asks. Unquoted names fold to upper case, so the guards compare
// with UPPER('${placeholder}').
//
// Each CREATE runs in a transaction of its own, one at a time in the
// database (guarded): Firebird checks DDL at commit (deferred work), and a
// failed commit of the driver's autocommit transaction (commit retaining)
// would leave that work pending on the pooled connection, failing every
// later statement on it; concurrent DDL is not safe on Firebird 3.
//
// Names. Firebird 3 allows 31 characters (bytes) per identifier. The spec's
// derived names go to 40 (idx_READ_MODEL_CAPTURE_RECORDS_partition); the
// dialect declares Naming.Shorten = dialect.ShortenHash, and the core turns
// every derived name over 31 characters into its first 22 characters, "_"
// and 8 hex digits of its SHA-256, in the DDL, the guards and every check.
// The DDL uses the spec's names; those that fit (idx_EVENT_STORE_global)
// are kept as they are.
//
// Key size. Firebird's index key is at most a quarter of the page (4 KB at
// the 16K pages the harness's template uses). UTF8 VARCHAR(n) counts
// characters (up to 4 bytes each), so the spec's VARCHAR(255) holds 255
// characters of any plane, and (aggregate_id, aggregate_type, sequence_no)
// is 2 x 1,020 + 8 bytes of key: it fits. On 8K pages (2 KB keys) it does
// not: use 16K pages (README.md).

// createTable guards a CREATE TABLE body (which must hold no single quote).
func createTable(placeholder, body string) string {
	if strings.Contains(body, "'") {
		panic("firebird ddl: quote in table body of " + placeholder)
	}
	return guarded(fmt.Sprintf("SELECT 1 FROM RDB$RELATIONS WHERE RDB$RELATION_NAME = UPPER('${%s}')", placeholder),
		fmt.Sprintf("CREATE TABLE ${%s} (\n%s\n)", placeholder, body))
}

// createIndex guards a CREATE INDEX named name on placeholder.
func createIndex(name, placeholder, columns string) string {
	return guardIndex("CREATE INDEX", name, placeholder, columns)
}

// guardIndex guards create (CREATE [DESCENDING] INDEX) named name.
func guardIndex(create, name, placeholder, columns string) string {
	return guarded(fmt.Sprintf("SELECT 1 FROM RDB$INDICES WHERE RDB$INDEX_NAME = UPPER('%s')", name),
		fmt.Sprintf("%s %s ON ${%s} (%s)", create, name, placeholder, columns))
}

// guarded runs stmt unless exists returns a row, in a transaction of its
// own, and one DDL at a time in the database: the transaction first
// rewrites the database's comment with its own text (COMMENT ON DATABASE,
// a change of RDB$DATABASE's one row), which a second creator cannot do
// before the first commits. Firebird 3 has no named lock (SchemaLock), and
// concurrent DDL on one database ended in "internal Firebird consistency
// check (can't continue after bugcheck)" (schema/concurrent_first_start).
// A waiter whose holder commits gets an update conflict (first updater
// wins), wrapped as "unsuccessful metadata update": its transaction is
// undone and the block tries again, and again finds the object or creates
// it. The bound (100 attempts, each waiting for a holder, not spinning)
// lets any other DDL failure, which PSQL sees under the same primary code,
// still reach the caller.
func guarded(exists, stmt string) string {
	return `EXECUTE BLOCK AS
DECLARE d BLOB SUB_TYPE TEXT;
DECLARE tries INTEGER = 0;
DECLARE done BOOLEAN = FALSE;
BEGIN
  WHILE (NOT done) DO
  BEGIN
    tries = tries + 1;
    BEGIN
      IN AUTONOMOUS TRANSACTION DO
      BEGIN
        SELECT RDB$DESCRIPTION FROM RDB$DATABASE INTO :d;
        EXECUTE STATEMENT 'COMMENT ON DATABASE IS ' || COALESCE('''' || REPLACE(d, '''', '''''') || '''', 'NULL');
        IF (NOT EXISTS (` + exists + `)) THEN
          EXECUTE STATEMENT '` + stmt + `';
      END
      done = TRUE;
      WHEN GDSCODE no_meta_update, GDSCODE deadlock, GDSCODE update_conflict DO
      BEGIN
        IF (tries >= 100) THEN EXCEPTION;
      END
    END
  END
END`
}

// counter is a single-row position counter, seeded with (1, 0) by a MERGE
// that never overwrites an existing row.
func counter(placeholder string) []string {
	return []string{
		createTable(placeholder, `    id  SMALLINT NOT NULL PRIMARY KEY,
    val BIGINT   NOT NULL`),
		`MERGE INTO ${` + placeholder + `} t USING (SELECT 1 AS id, 0 AS val FROM RDB$DATABASE) s ON t.id = s.id
WHEN NOT MATCHED THEN INSERT (id, val) VALUES (s.id, s.val)`,
	}
}

// Column types: UUIDs as CHAR(36) (no UUID type; the core binds the text
// form), keys as the spec's VARCHAR(255) (characters in UTF8), large text as BLOB SUB_TYPE TEXT, instants as TIMESTAMP (Firebird 3
// has no time zones and stores 1/10000 s: 100 µs, see README.md).
func ddl() map[string][]string {
	return map[string][]string{
		dialect.ScriptEventStoreGlobalPosition: counter("event_store_global_position_table"),
		dialect.ScriptEventStore: {
			createTable("event_store_table", `    id              CHAR(36)           NOT NULL,
    aggregate_id    VARCHAR(255)       NOT NULL,
    aggregate_type  VARCHAR(255)       NOT NULL,
    sequence_no     BIGINT             NOT NULL,
    event_type      VARCHAR(255)       NOT NULL,
    event_revision  INTEGER DEFAULT 0  NOT NULL,
    payload         BLOB SUB_TYPE TEXT NOT NULL,
    metadata        BLOB SUB_TYPE TEXT,
    occurred_at     TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL,
    partition_key   SMALLINT           NOT NULL,
    global_position BIGINT             NOT NULL,
    CONSTRAINT pk_${event_store_table} PRIMARY KEY (id),
    UNIQUE (aggregate_id, sequence_no)`),
			createIndex("idx_${event_store_table}_aggregate", "event_store_table", "aggregate_id, aggregate_type, sequence_no"),
			createIndex("idx_${event_store_table}_global", "event_store_table", "global_position"),
			createIndex("idx_${event_store_table}_partition", "event_store_table", "partition_key, global_position"),
			// Firebird walks an index in its own direction only: a stream's
			// last version (MAX, or the first row in descending order) is
			// one probe only through a DESCENDING index; the ascending
			// unique one reads the whole stream. aggregate_type rides along
			// so the index's columns differ from the unique constraint's
			// (the schema read-back pairs an engine-named unique with the
			// index of its columns).
			guardIndex("CREATE DESCENDING INDEX", "idx_${event_store_table}_version", "event_store_table", "aggregate_id, sequence_no, aggregate_type"),
		},
		dialect.ScriptSnapshots: {
			createTable("aggregate_snapshots_table", `    id               CHAR(36)           NOT NULL PRIMARY KEY,
    aggregate_id     VARCHAR(255)       NOT NULL,
    aggregate_type   VARCHAR(255)       NOT NULL,
    sequence_no      BIGINT             NOT NULL,
    snapshot_version INTEGER DEFAULT 1  NOT NULL,
    payload          BLOB SUB_TYPE TEXT NOT NULL,
    created_at       TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL,
    UNIQUE (aggregate_id, sequence_no)`),
			// The spec's index ends in sequence_no DESC. Firebird orders a
			// whole index, not a column: a DESCENDING index on the same
			// columns serves the lookup (equality on the first three,
			// newest sequence_no first) as the spec's does.
			guardIndex("CREATE DESCENDING INDEX", "idx_${aggregate_snapshots_table}_lookup", "aggregate_snapshots_table", "aggregate_id, aggregate_type, snapshot_version, sequence_no"),
		},
		dialect.ScriptPartitionMetadata: {createTable("partition_metadata_table", `    id         SMALLINT NOT NULL PRIMARY KEY,
    partitions INTEGER  NOT NULL`)},
		dialect.ScriptEventCaptureGlobalPos: counter("event_capture_global_position_table"),
		dialect.ScriptEventCaptureRecords: {
			createTable("event_capture_records_table", `    id              CHAR(36)           NOT NULL PRIMARY KEY,
    global_position BIGINT             NOT NULL,
    partition_key   SMALLINT           NOT NULL,
    event_type      VARCHAR(255)       NOT NULL,
    event_revision  INTEGER DEFAULT 0  NOT NULL,
    payload         BLOB SUB_TYPE TEXT NOT NULL,
    metadata        BLOB SUB_TYPE TEXT,
    occurred_at     TIMESTAMP          NOT NULL,
    message_key     VARCHAR(255),
    UNIQUE (global_position)`),
			createIndex("idx_${event_capture_records_table}_partition", "event_capture_records_table", "partition_key, global_position"),
			createIndex("idx_${event_capture_records_table}_key", "event_capture_records_table", "message_key, global_position"),
		},
		dialect.ScriptHighWaterMarkStore: {createTable("high_water_mark_store_table", `    topic_name       VARCHAR(255)     NOT NULL PRIMARY KEY,
    high_water_mark  BIGINT           NOT NULL,
    pending_end      BIGINT,
    pending_horizon  BIGINT,
    topic_start      BIGINT DEFAULT 0 NOT NULL,
    lease_owner      VARCHAR(255),
    lease_expires_at TIMESTAMP`)},
		dialect.ScriptTopicCompaction: {createTable("topic_compaction_table", `    topic_name        VARCHAR(255) NOT NULL PRIMARY KEY,
    compacted_through BIGINT       NOT NULL`)},
		dialect.ScriptConsumerCheckpoints: {
			createTable("consumers_table", `    id                      CHAR(36)     NOT NULL PRIMARY KEY,
    consumer_type           VARCHAR(32)  NOT NULL,
    consumer_name           VARCHAR(255) NOT NULL,
    state                   VARCHAR(16),
    halt_reason             VARCHAR(32),
    epoch                   BIGINT,
    declaration_fingerprint VARCHAR(255),
    state_since             TIMESTAMP    NOT NULL,
    CONSTRAINT uq_${consumers_table} UNIQUE (consumer_type, consumer_name)`),
			createTable("consumer_checkpoints_table", `    consumer_id        CHAR(36)     NOT NULL,
    source_name        VARCHAR(255) NOT NULL,
    partition_no       SMALLINT     NOT NULL,
    "POSITION"         BIGINT,
    incomplete_through BIGINT,
    replay_through     BIGINT,
    epoch              BIGINT,
    PRIMARY KEY (consumer_id, source_name, partition_no),
    CONSTRAINT fk_${consumer_checkpoints_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)`),
		},
		dialect.ScriptConsumerUndelivered: {createTable("consumer_undelivered_messages_table", `    id               CHAR(36)      NOT NULL PRIMARY KEY,
    consumer_id      CHAR(36)      NOT NULL,
    source_name      VARCHAR(255)  NOT NULL,
    resolved_key     VARCHAR(255)  NOT NULL,
    key_hash         BIGINT        NOT NULL,
    message_position BIGINT        NOT NULL,
    partition_no     SMALLINT      NOT NULL,
    status           VARCHAR(16)   NOT NULL,
    failure_count    INTEGER       NOT NULL,
    next_retry_at    TIMESTAMP,
    failure_reason   VARCHAR(1000),
    recorded_at      TIMESTAMP     NOT NULL,
    unresolved       BOOLEAN       NOT NULL,
    message_copy     BLOB SUB_TYPE TEXT,
    CONSTRAINT uq_${consumer_undelivered_messages_table} UNIQUE (consumer_id, source_name, message_position, partition_no, key_hash),
    CONSTRAINT fk_${consumer_undelivered_messages_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)`)},
		dialect.ScriptConsumerSkipped: {
			createTable("consumer_skipped_messages_table", `    id               CHAR(36)     NOT NULL PRIMARY KEY,
    consumer_id      CHAR(36)     NOT NULL,
    source_name      VARCHAR(255) NOT NULL,
    partition_no     SMALLINT     NOT NULL,
    message_position BIGINT       NOT NULL,
    resolved_key     VARCHAR(255) NOT NULL,
    every_key        BOOLEAN      NOT NULL,
    CONSTRAINT fk_${consumer_skipped_messages_table}_consumer FOREIGN KEY (consumer_id) REFERENCES ${consumers_table} (id)`),
			createIndex("idx_${consumer_skipped_messages_table}_position", "consumer_skipped_messages_table", "consumer_id, source_name, message_position"),
		},
		dialect.ScriptPartitionInstances: {createTable("partition_instances_table", `    instance_id    VARCHAR(255) NOT NULL PRIMARY KEY,
    host_name      VARCHAR(255),
    started_at     TIMESTAMP    NOT NULL,
    last_heartbeat TIMESTAMP    NOT NULL,
    expires_at     TIMESTAMP    NOT NULL`)},
		dialect.ScriptPartitionOwnership: {
			createTable("partition_ownership_table", `    consumer_type VARCHAR(32)      NOT NULL,
    consumer_name VARCHAR(255)     NOT NULL,
    partition_no  SMALLINT         NOT NULL,
    instance_id   VARCHAR(255),
    generation    BIGINT DEFAULT 0 NOT NULL,
    PRIMARY KEY (consumer_type, consumer_name, partition_no)`),
			createIndex("idx_${partition_ownership_table}_instance_id", "partition_ownership_table", "instance_id"),
		},
		dialect.ScriptPartitionMembers: {
			createTable("partition_members_table", `    consumer_type VARCHAR(32)  NOT NULL,
    consumer_name VARCHAR(255) NOT NULL,
    instance_id   VARCHAR(255) NOT NULL,
    PRIMARY KEY (consumer_type, consumer_name, instance_id)`),
			createIndex("idx_${partition_members_table}_instance_id", "partition_members_table", "instance_id"),
		},
		dialect.ScriptReadModelTopic: {
			createTable("read_model_capture_positions_table", `    topic VARCHAR(255) NOT NULL PRIMARY KEY,
    val   BIGINT       NOT NULL`),
			createTable("read_model_capture_records_table", `    id                  CHAR(36)           NOT NULL PRIMARY KEY,
    topic               VARCHAR(255)       NOT NULL,
    topic_position      BIGINT             NOT NULL,
    partition_key       SMALLINT           NOT NULL,
    read_model_key      VARCHAR(255)       NOT NULL,
    read_model_type     VARCHAR(255)       NOT NULL,
    read_model_revision INTEGER DEFAULT 0  NOT NULL,
    payload             BLOB SUB_TYPE TEXT NOT NULL,
    metadata            BLOB SUB_TYPE TEXT,
    cascade_depth       INTEGER            NOT NULL,
    deleted             BOOLEAN            NOT NULL,
    occurred_at         TIMESTAMP          NOT NULL,
    CONSTRAINT uq_${read_model_capture_records_table}_position UNIQUE (topic, topic_position)`),
			createIndex("idx_${read_model_capture_records_table}_partition", "read_model_capture_records_table", "topic, partition_key, topic_position"),
			createIndex("idx_${read_model_capture_records_table}_key", "read_model_capture_records_table", "topic, read_model_key, topic_position"),
		},
		dialect.ScriptReadModelEpochs: {createTable("read_model_epochs_table", `    projection     VARCHAR(255) NOT NULL,
    read_model_key VARCHAR(255) NOT NULL,
    epoch          BIGINT       NOT NULL,
    CONSTRAINT pk_${read_model_epochs_table} PRIMARY KEY (projection, read_model_key)`)},
		dialect.ScriptQueryTable: {createTable("query_table", `    read_model_id VARCHAR(255) NOT NULL,
    message_id    CHAR(36)     NOT NULL,
    ${query_columns}
    PRIMARY KEY (read_model_id)`)},
		dialect.ScriptSagaInstances: {createTable("saga_instances_table", `    id           CHAR(36)           NOT NULL PRIMARY KEY,
    saga_type    VARCHAR(255)       NOT NULL,
    saga_id      VARCHAR(255)       NOT NULL,
    state_json   BLOB SUB_TYPE TEXT NOT NULL,
    version      BIGINT             NOT NULL,
    completed_at TIMESTAMP,
    UNIQUE (saga_type, saga_id)`)},
		dialect.ScriptSagaDeadlines: {
			createTable("saga_deadlines_table", `    id            CHAR(36)     NOT NULL PRIMARY KEY,
    saga_type     VARCHAR(255) NOT NULL,
    saga_id       VARCHAR(255) NOT NULL,
    name          VARCHAR(255) NOT NULL,
    due_at        TIMESTAMP    NOT NULL,
    payload_json  BLOB SUB_TYPE TEXT,
    metadata_json BLOB SUB_TYPE TEXT,
    UNIQUE (saga_type, saga_id, name)`),
			createIndex("idx_${saga_deadlines_table}_due_at", "saga_deadlines_table", "due_at"),
		},
		dialect.ScriptSagaDeadlineLocks: {createTable("saga_deadline_locks_table", `    lock_name  VARCHAR(255) NOT NULL PRIMARY KEY,
    owner      VARCHAR(255) NOT NULL,
    expires_at TIMESTAMP    NOT NULL`)},
		dialect.ScriptEventPublicationMetadata: {
			createTable("event_publication_metadata_table", `    PUBLICATION_ID  VARCHAR(36)        NOT NULL PRIMARY KEY,
    COMPLETION_DATE TIMESTAMP,
    METADATA        BLOB SUB_TYPE TEXT NOT NULL`),
			createIndex("idx_event_pub_meta_completion", "event_publication_metadata_table", "COMPLETION_DATE"),
		},
	}
}
