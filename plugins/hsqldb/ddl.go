package hsqldb

import (
	"github.com/tidemarkdb/tidemark/plugins/internal/specddl"
)

// ddl returns the DDL templates of every standard script, keyed by script name.
//
// The statements are the spec's HSQLDB 2.7 blocks with every table name replaced
// by its ${placeholder} and every derived index or constraint name built from
// it (docs/spec-deviations.md lists where they differ from the spec). The
// position objects are single-row counter tables seeded with (1, 0) by a MERGE
// that never overwrites an existing row; READ_MODEL_CAPTURE_POSITIONS gets its
// rows per topic at runtime.
// The statements shared with the other dialects come from specddl.
//
// Every script starts with noPad, so each area compares its keys exactly
// whichever areas are switched on.
func ddl() map[string][]string {
	m := specddl.Merge(specddl.CommonScripts(), eventSourcingDDL, messagingDDL, cqrsSagaDDL)
	for name, stmts := range m {
		m[name] = append([]string{noPad}, stmts...)
	}
	return m
}

// noPad makes every text comparison of the database exact: SQL_TEXT (the
// default collation, code-unit order, case-sensitive) without PAD SPACE.
// HSQLDB pads by default, so "acc-1 " equals "acc-1" and a primary or unique
// key refuses the second. HSQLDB 2.7 takes NO PAD only database-wide or in a
// CREATE COLLATION, which has no IF NOT EXISTS (a script must be able to run
// twice); the SET is idempotent. It sets the property sql.pad_space=false,
// for the existing tables too (their indexes are not rebuilt: keys that
// differ only by trailing spaces could not be stored before, so none exist).
// It needs the DBA role (SA has it).
const noPad = "SET DATABASE COLLATION SQL_TEXT NO PAD"
