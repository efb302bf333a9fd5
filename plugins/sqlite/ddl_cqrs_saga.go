package sqlite

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/internal/specddl"
)

// cqrsSagaDDL holds the CQRS, saga and publication scripts that are not the
// same on every dialect: query tables, saga instances, deadlines, publication
// metadata (the rest are in specddl.CommonScripts). UUIDs are CHAR(36).
var cqrsSagaDDL = map[string][]string{
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
		specddl.SagaDeadlinesDueAtIndex,
	},
	dialect.ScriptEventPublicationMetadata: {
		`CREATE TABLE IF NOT EXISTS ${event_publication_metadata_table} (
  PUBLICATION_ID  VARCHAR(36)                 NOT NULL,
  COMPLETION_DATE TIMESTAMP,
  METADATA        TEXT                        NOT NULL,
  PRIMARY KEY (PUBLICATION_ID)
)`,
		specddl.EventPublicationMetadataCompletionIndex,
	},
}
