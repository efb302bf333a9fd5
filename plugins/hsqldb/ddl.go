package hsqldb

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
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
	return specddl.Merge(specddl.CommonScripts(), eventSourcingDDL, messagingDDL, cqrsSagaDDL)
}

// noPad is the engine check that makes every text comparison of the
// database exact: SQL_TEXT (the default collation, code-unit order,
// case-sensitive) without PAD SPACE. HSQLDB pads by default, so "acc-1 "
// equals "acc-1" and a primary or unique key refuses the second. HSQLDB 2.7
// takes NO PAD only database-wide (the property sql.pad_space) or in a
// CREATE COLLATION, which has no IF NOT EXISTS. Setting it needs the DBA
// role, which a schema owner lacks (the JDBC bridge's sessions are such
// owners), so it is not DDL: the core reads sql.pad_space at every start and
// runs the SET only when it is still true. A database created with
// ;sql.pad_space=false in its URL needs no rights at all. Existing indexes
// are not rebuilt by the SET: keys that differ only by trailing spaces could
// not be stored before it, so none exist.
var noPad = dialect.EngineCheck{
	Name:   "exact key comparison (HSQLDB sql.pad_space)",
	Query:  "SELECT PROPERTY_VALUE FROM INFORMATION_SCHEMA.SYSTEM_PROPERTIES WHERE PROPERTY_NAME = 'sql.pad_space'",
	Want:   "false",
	Fix:    "SET DATABASE COLLATION SQL_TEXT NO PAD",
	Remedy: "create the database with ;sql.pad_space=false in its URL, or have a DBA run SET DATABASE COLLATION SQL_TEXT NO PAD once",
}
