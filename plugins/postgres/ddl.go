package postgres

import (
	"github.com/tidemarkdb/tidemark/plugins/internal/specddl"
)

// ddl returns the DDL templates of every standard script, keyed by script name.
//
// The statements are the spec's PostgreSQL blocks with every table name
// replaced by its ${placeholder} and every derived index or constraint name
// built from it (docs/spec-deviations.md lists where they differ from the
// spec). The position objects are CACHE 1 sequences; the core checks their
// cache size at startup and runs position.fix_cache only when it is not 1,
// so the DDL carries no ALTER SEQUENCE. The statements PostgreSQL shares with
// the other dialects come from specddl.
func ddl() map[string][]string {
	return specddl.Merge(specddl.CommonScripts(), eventSourcingDDL, messagingDDL, cqrsSagaDDL)
}
