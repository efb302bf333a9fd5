package sqlserver

import (
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// The capture topic's statements bind what their specs
// (core/dialect/statements_topic.go) document; added to binds.
func init() {
	for _, sp := range dialect.Specs() {
		if strings.HasPrefix(string(sp.ID), "topic.") {
			binds[sp.ID] = sp.Binds
		}
	}
}
