// Command tidemark-dialect-sqlite serves the sqlite dialect to a Tidemark host.
package main

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/sqlite"
)

func main() { dialect.Serve(sqlite.New()) }
