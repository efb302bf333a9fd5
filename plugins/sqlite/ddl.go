package sqlite

import (
	"github.com/tidemarkdb/tidemark/plugins/internal/specddl"
)

// ddl returns the DDL templates of every standard script, keyed by script name.
//
// SQLite is not in the spec: this is Tidemark's own mapping of the spec's H2
// and PostgreSQL DDL, with the same tables, columns (in the same order),
// indexes and constraint names, documented in docs/spec-deviations.md. UUIDs
// are CHAR(36); JSON, CLOB and TEXT are TEXT; every timestamp is TIMESTAMP
// holding UTF-8 ISO-8601 text in UTC; the position objects are single-row
// counter tables seeded with (1, 0) by an INSERT … ON CONFLICT DO NOTHING
// that never overwrites the row. Text compares with SQLite's default BINARY
// collation, so keys compare exactly. Foreign keys are declared as in the
// spec; SQLite enforces them on connections with PRAGMA foreign_keys = ON.
// The statements shared with the other dialects come from specddl.
func ddl() map[string][]string {
	return specddl.Merge(specddl.CommonScripts(), eventSourcingDDL, messagingDDL, cqrsSagaDDL)
}
