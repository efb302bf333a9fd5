package h2

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/internal/specddl"
)

// cqrsSagaDDL holds the CQRS, saga and publication scripts that are not the
// same on every dialect: query tables, saga instances, deadlines, publication
// metadata (the rest are in specddl.CommonScripts).
var cqrsSagaDDL = map[string][]string{
	dialect.ScriptQueryTable:    {specddl.QueryTable},
	dialect.ScriptSagaInstances: {specddl.SagaInstancesTable},
	dialect.ScriptSagaDeadlines: {
		specddl.SagaDeadlinesTable,
		specddl.SagaDeadlinesDueAtIndex,
	},
	dialect.ScriptEventPublicationMetadata: {
		`CREATE TABLE IF NOT EXISTS ${event_publication_metadata_table} (
  PUBLICATION_ID  VARCHAR(36)                 NOT NULL,
  COMPLETION_DATE TIMESTAMP(9) WITH TIME ZONE,
  METADATA        CLOB                        NOT NULL,
  PRIMARY KEY (PUBLICATION_ID)
)`,
		specddl.EventPublicationMetadataCompletionIndex,
	},
}
