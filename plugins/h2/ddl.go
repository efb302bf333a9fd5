package h2

import (
	"github.com/tidemarkdb/tidemark/plugins/internal/specddl"
)

// ddl returns the DDL templates of every standard script, keyed by script name.
//
// The statements are the spec's H2 2.1 blocks with every table name replaced
// by its ${placeholder} and every derived index or constraint name built from
// it (docs/spec-deviations.md lists where they differ from the spec). The
// position objects are single-row counter tables seeded with (1, 0) by a MERGE
// that never overwrites an existing row; READ_MODEL_CAPTURE_POSITIONS gets its
// rows per topic at runtime.
// The statements shared with the other dialects come from specddl.
func ddl() map[string][]string {
	return specddl.Merge(specddl.CommonScripts(), eventSourcingDDL, messagingDDL, cqrsSagaDDL)
}
