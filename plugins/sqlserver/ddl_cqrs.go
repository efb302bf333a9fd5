package sqlserver

import "github.com/tidemarkdb/tidemark/core/dialect"

// ifNoSagaTable is the spec's guard of the saga tables. Unlike OBJECT_ID it
// looks in every schema of the database, so a table of the same name in
// another schema also counts as present.
func ifNoSagaTable(placeholder string) string {
	return "IF NOT EXISTS (SELECT * FROM sys.tables WHERE name = '${" + placeholder + "}')\n"
}

// cqrsSagaDDL: read-model topics and epochs, query tables, sagas and the
// domain-event publication metadata.
func cqrsSagaDDL() map[string][]string {
	return map[string][]string{
		dialect.ScriptReadModelTopic: {
			ifNoTable("read_model_capture_positions_table") + `    CREATE TABLE ${read_model_capture_positions_table} (
        topic       NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL PRIMARY KEY,
        val         BIGINT NOT NULL
    )`,
			ifNoTable("read_model_capture_records_table") + `    CREATE TABLE ${read_model_capture_records_table} (
        id                  VARCHAR(36)   NOT NULL PRIMARY KEY,
        topic               NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
        topic_position      BIGINT        NOT NULL,
        partition_key       SMALLINT      NOT NULL,
        read_model_key      NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
        read_model_type     NVARCHAR(255) NOT NULL,
        read_model_revision INT           NOT NULL DEFAULT 0,
        payload             NVARCHAR(MAX) NOT NULL,
        metadata            NVARCHAR(MAX),
        cascade_depth       INT           NOT NULL,
        deleted             BIT           NOT NULL,
        occurred_at         DATETIME2     NOT NULL,
        CONSTRAINT uq_${read_model_capture_records_table}_position UNIQUE (topic, topic_position)
    )`,
			guardedIndex("read_model_capture_records_table", "idx_${read_model_capture_records_table}_partition", false,
				"topic", "partition_key", "topic_position"),
			guardedIndex("read_model_capture_records_table", "idx_${read_model_capture_records_table}_key", false,
				"topic", "read_model_key", "topic_position"),
		},
		// The primary key is nonclustered: two NVARCHAR(255) columns take up
		// to 1020 bytes, over the 900-byte limit of a clustered key.
		dialect.ScriptReadModelEpochs: {ifNoTable("read_model_epochs_table") + `    CREATE TABLE ${read_model_epochs_table} (
        projection     NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
        read_model_key NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
        epoch          BIGINT        NOT NULL,
        CONSTRAINT pk_${read_model_epochs_table} PRIMARY KEY NONCLUSTERED (projection, read_model_key)
    )`},
		// ${query_columns} is one "column type," line per query field, so a
		// projection without query fields still yields valid DDL. The
		// per-column indexes are QueryColumnTypes.Index and UniqueIndex.
		dialect.ScriptQueryTable: {ifNoTable("query_table") + `    CREATE TABLE ${query_table} (
        read_model_id   NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
        message_id      VARCHAR(36)   NOT NULL,
        ${query_columns}
        PRIMARY KEY (read_model_id)
    )`},
		dialect.ScriptSagaInstances: {ifNoSagaTable("saga_instances_table") + `CREATE TABLE ${saga_instances_table} (
    id          VARCHAR(36)   NOT NULL PRIMARY KEY,
    saga_type   VARCHAR(255)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    saga_id     VARCHAR(255)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    state_json  NVARCHAR(MAX) NOT NULL,
    version     BIGINT        NOT NULL,
    completed_at DATETIME2,
    UNIQUE (saga_type, saga_id)
)`},
		dialect.ScriptSagaDeadlines: {
			ifNoSagaTable("saga_deadlines_table") + `CREATE TABLE ${saga_deadlines_table} (
    id            VARCHAR(36)   NOT NULL PRIMARY KEY,
    saga_type     VARCHAR(255)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    saga_id       VARCHAR(255)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    name          VARCHAR(255)  COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    due_at        DATETIME2     NOT NULL,
    payload_json  NVARCHAR(MAX),
    metadata_json NVARCHAR(MAX),
    UNIQUE (saga_type, saga_id, name)
)`,
			guardedIndex("saga_deadlines_table", "idx_${saga_deadlines_table}_due_at", false, "due_at"),
		},
		dialect.ScriptSagaDeadlineLocks: {ifNoSagaTable("saga_deadline_locks_table") + `CREATE TABLE ${saga_deadline_locks_table} (
    lock_name  VARCHAR(255) COLLATE Latin1_General_100_BIN2_UTF8 NOT NULL,
    owner      VARCHAR(255) NOT NULL,
    expires_at DATETIME2    NOT NULL,
    PRIMARY KEY (lock_name)
)`},
		// Spring Modulith's tables take no prefix; the index name is fixed.
		dialect.ScriptEventPublicationMetadata: {
			ifNoTable("event_publication_metadata_table") + `CREATE TABLE ${event_publication_metadata_table} (
  PUBLICATION_ID  VARCHAR(36)    NOT NULL,
  COMPLETION_DATE DATETIMEOFFSET,
  METADATA        NVARCHAR(MAX)  NOT NULL,
  PRIMARY KEY (PUBLICATION_ID)
)`,
			guardedIndex("event_publication_metadata_table", "idx_event_pub_meta_completion", false, "COMPLETION_DATE"),
		},
	}
}
