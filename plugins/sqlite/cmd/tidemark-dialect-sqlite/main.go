// Command tidemark-dialect-sqlite serves the sqlite dialect to a Tidemark host.
package main

import (
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/sqlite"
)

func main() { plugin.Serve(sqlite.New()) }
