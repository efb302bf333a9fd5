package sqlite

import "github.com/tidemarkdb/tidemark/core/dialect"

// cqrsSagaDDL holds the CQRS, saga and publication scripts: read-model epochs, query tables, saga instances, deadlines, deadline locks, publication metadata.
var cqrsSagaDDL = map[string][]string{
	dialect.ScriptReadModelEpochs: {
		`CREATE TABLE IF NOT EXISTS ${read_model_epochs_table} (
    projection     VARCHAR(255) NOT NULL,
    read_model_key VARCHAR(255) NOT NULL,
    epoch          BIGINT       NOT NULL,
    CONSTRAINT pk_${read_model_epochs_table} PRIMARY KEY (projection, read_model_key)
)`,
	},
	dialect.ScriptQueryTable: {
		`CREATE TABLE IF NOT EXISTS ${query_table} (
    read_model_id   VARCHAR(255) NOT NULL,
    message_id      CHAR(36)     NOT NULL,
    ${query_columns}
    PRIMARY KEY (read_model_id)
)`,
	},
	dialect.ScriptSagaInstances: {
		`CREATE TABLE IF NOT EXISTS ${saga_instances_table} (
    id          CHAR(36)     NOT NULL PRIMARY KEY,
    saga_type   VARCHAR(255) NOT NULL,
    saga_id     VARCHAR(255) NOT NULL,
    state_json  TEXT         NOT NULL,
    version     BIGINT       NOT NULL,
    completed_at TIMESTAMP,
    UNIQUE (saga_type, saga_id)
)`,
	},
	dialect.ScriptSagaDeadlines: {
		`CREATE TABLE IF NOT EXISTS ${saga_deadlines_table} (
    id            CHAR(36)     NOT NULL PRIMARY KEY,
    saga_type     VARCHAR(255) NOT NULL,
    saga_id       VARCHAR(255) NOT NULL,
    name          VARCHAR(255) NOT NULL,
    due_at        TIMESTAMP    NOT NULL,
    payload_json  TEXT,
    metadata_json TEXT,
    UNIQUE (saga_type, saga_id, name)
)`,
		`CREATE INDEX IF NOT EXISTS idx_${saga_deadlines_table}_due_at
    ON ${saga_deadlines_table} (due_at)`,
	},
	dialect.ScriptSagaDeadlineLocks: {
		`CREATE TABLE IF NOT EXISTS ${saga_deadline_locks_table} (
    lock_name  VARCHAR(255) NOT NULL,
    owner      VARCHAR(255) NOT NULL,
    expires_at TIMESTAMP    NOT NULL,
    PRIMARY KEY (lock_name)
)`,
	},
	dialect.ScriptEventPublicationMetadata: {
		`CREATE TABLE IF NOT EXISTS ${event_publication_metadata_table} (
  PUBLICATION_ID  VARCHAR(36)                 NOT NULL,
  COMPLETION_DATE TIMESTAMP,
  METADATA        TEXT                        NOT NULL,
  PRIMARY KEY (PUBLICATION_ID)
)`,
		`CREATE INDEX IF NOT EXISTS idx_event_pub_meta_completion
  ON ${event_publication_metadata_table} (COMPLETION_DATE)`,
	},
}
