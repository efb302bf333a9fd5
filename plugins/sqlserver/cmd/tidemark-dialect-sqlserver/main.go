// Command tidemark-dialect-sqlserver serves the sqlserver dialect to a Tidemark host.
package main

import (
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/sqlserver"
)

func main() { plugin.Serve(sqlserver.New()) }
