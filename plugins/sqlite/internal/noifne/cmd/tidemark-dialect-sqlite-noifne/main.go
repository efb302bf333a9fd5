// Command tidemark-dialect-sqlite-noifne serves the test-only SQLite variant
// without IF NOT EXISTS.
package main

import (
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/sqlite/internal/noifne"
)

func main() { plugin.Serve(noifne.New()) }
